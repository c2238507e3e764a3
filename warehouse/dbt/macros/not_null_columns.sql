{#- No row holds NULL in any of `columns`: one test for all of them (macros/grain.sql says why),
    for a model with no unique key to state. -#}
{% test not_null_columns(model, columns) %}
SELECT *
FROM {{ model }}
WHERE {% for column in columns %}{{ column }} IS NULL{% if not loop.last %} OR {% endif %}{% endfor %}
{% endtest %}
