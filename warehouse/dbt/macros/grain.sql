{#- A model's grain: no two rows share `columns` (NULL counts as a value, as in GROUP BY), and
    no row holds NULL in a column of `not_null`. One test for both, not one per column: dbt
    spends ~50 ms on each test node whatever its query, and each is a Dagster check evaluated
    (two events) in every run that builds the model. A failing row names the key, how many rows
    share it and how many of them hold each NULL. -#}
{% test grain(model, columns, not_null=[]) %}
SELECT
    {{ columns | join(', ') }},
    count(*) AS rows_sharing_the_key
    {%- for column in not_null %},
    count(*) FILTER (WHERE {{ column }} IS NULL) AS null_{{ column }}
    {%- endfor %}
FROM {{ model }}
GROUP BY ALL
HAVING count(*) > 1
    {%- for column in not_null %} OR null_{{ column }} > 0{% endfor %}
{% endtest %}
