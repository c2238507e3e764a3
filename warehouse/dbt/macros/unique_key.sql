{#- A mart's grain: no two rows share these columns (NULL counts as a value, as in GROUP BY). -#}
{% test unique_key(model, columns) %}
SELECT {{ columns | join(', ') }}, count(*) AS rows_sharing_the_key
FROM {{ model }}
GROUP BY ALL
HAVING count(*) > 1
{% endtest %}
