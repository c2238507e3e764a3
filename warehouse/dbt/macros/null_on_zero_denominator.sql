{#- A ratio recomputed from sums is NULL whenever its denominator is NULL or 0: never 0 in its
    place, never infinite. -#}
{% test null_on_zero_denominator(model, column_name, denominator) %}
SELECT *
FROM {{ model }}
WHERE coalesce({{ denominator }}, 0) = 0 AND {{ column_name }} IS NOT NULL
{% endtest %}
