{#- How seller figures add up over rows (products, days, clusters): sums skip what was not
    reported and stay NULL when nothing was; buy-box shares are weighted by page views, never
    averaged; orders_with_traffic counts only rows whose traffic was reported. `t` is the
    table's alias with its dot ('s.'), or ''; `summed`: over rows already summed per product
    and day (int_product_daily), whose weighted and filtered sums are added up as they are.
    One place for the rule; seller_conversion reads these sums. -#}
{% macro seller_sums(t='', summed=false) %}
        sum({{ t }}sales) AS sales,
    {%- for name in ['units', 'orders', 'sessions', 'page_views'] %}
        CAST(sum({{ t }}{{ name }}) AS BIGINT) AS {{ name }},
    {%- endfor %}
    {%- if summed %}
        CAST(sum({{ t }}orders_with_traffic) AS BIGINT) AS orders_with_traffic,
        sum({{ t }}buy_box_weighted) AS buy_box_weighted,
        CAST(sum({{ t }}buy_box_weight) AS BIGINT) AS buy_box_weight,
    {%- else %}
        CAST(sum({{ t }}orders) FILTER (WHERE {{ t }}sessions IS NOT NULL) AS BIGINT)
            AS orders_with_traffic,
        sum({{ t }}buy_box_percentage * {{ t }}page_views)
            FILTER (WHERE {{ t }}buy_box_percentage IS NOT NULL AND {{ t }}page_views IS NOT NULL)
            AS buy_box_weighted,
        CAST(sum({{ t }}page_views) FILTER (WHERE {{ t }}buy_box_percentage IS NOT NULL) AS BIGINT)
            AS buy_box_weight,
    {%- endif %}
        sum({{ t }}b2b_sales) AS b2b_sales,
        CAST(sum({{ t }}b2b_units) AS BIGINT) AS b2b_units
{%- endmacro %}

{#- How product-ad figures add up, named as the marts put them beside seller figures. `summed`:
    over rows already summed per product and day (int_product_daily), which carry those names. -#}
{% macro ad_sums(t='', summed=false) %}
    {%- for name in ['impressions', 'clicks', 'orders', 'units'] %}
        CAST(sum({{ t }}{{ 'ad_' if summed }}{{ name }}) AS BIGINT) AS ad_{{ name }},
    {%- endfor %}
        sum({{ t }}{{ 'ad_spend' if summed else 'cost' }}) AS ad_spend,
        sum({{ t }}{{ 'ad_' if summed }}sales) AS ad_sales
{%- endmacro %}
