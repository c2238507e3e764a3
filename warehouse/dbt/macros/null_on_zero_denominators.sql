{#- Each ratio recomputed from sums is NULL whenever its denominator is NULL or 0: never 0 in its
    place, never infinite. `ratios` maps each ratio column to its denominator; one test for all
    of a model's ratios (macros/grain.sql says why). -#}
{% test null_on_zero_denominators(model, ratios) %}
SELECT *
FROM {{ model }}
WHERE
{%- for ratio, denominator in ratios.items() %}
    {% if not loop.first %}OR {% endif %}(coalesce({{ denominator }}, 0) = 0 AND {{ ratio }} IS NOT NULL)
{%- endfor %}
{% endtest %}
