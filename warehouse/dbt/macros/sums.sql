{#- How seller figures add up over rows (products, days, clusters): sums skip what was not
    reported and stay NULL when nothing was; buy-box shares are weighted by page views, never
    averaged; orders_with_traffic counts only rows whose traffic was reported. `t` is the
    table's alias with its dot ('s.'), or ''. One place for the rule; seller_conversion reads
    these sums. -#}
{% macro seller_sums(t='') %}
        sum({{ t }}sales) AS sales,
        CAST(sum({{ t }}units) AS BIGINT) AS units,
        CAST(sum({{ t }}orders) AS BIGINT) AS orders,
        CAST(sum({{ t }}sessions) AS BIGINT) AS sessions,
        CAST(sum({{ t }}page_views) AS BIGINT) AS page_views,
        CAST(sum({{ t }}orders) FILTER (WHERE {{ t }}sessions IS NOT NULL) AS BIGINT)
            AS orders_with_traffic,
        sum({{ t }}buy_box_percentage * {{ t }}page_views)
            FILTER (WHERE {{ t }}buy_box_percentage IS NOT NULL AND {{ t }}page_views IS NOT NULL)
            AS buy_box_weighted,
        CAST(sum({{ t }}page_views) FILTER (WHERE {{ t }}buy_box_percentage IS NOT NULL) AS BIGINT)
            AS buy_box_weight,
        sum({{ t }}b2b_sales) AS b2b_sales,
        CAST(sum({{ t }}b2b_units) AS BIGINT) AS b2b_units
{%- endmacro %}

{#- How product-ad figures add up, named as the marts put them beside seller figures. -#}
{% macro ad_sums(t='') %}
        CAST(sum({{ t }}impressions) AS BIGINT) AS ad_impressions,
        CAST(sum({{ t }}clicks) AS BIGINT) AS ad_clicks,
        CAST(sum({{ t }}orders) AS BIGINT) AS ad_orders,
        CAST(sum({{ t }}units) AS BIGINT) AS ad_units,
        sum({{ t }}cost) AS ad_spend,
        sum({{ t }}sales) AS ad_sales
{%- endmacro %}

{#- The same sums over rows already summed per product and day (int_product_daily): a sum of
    sums, with the counts cast back to BIGINT. -#}
{% macro seller_sums_of_products(t='') %}
        sum({{ t }}sales) AS sales,
        CAST(sum({{ t }}units) AS BIGINT) AS units,
        CAST(sum({{ t }}orders) AS BIGINT) AS orders,
        CAST(sum({{ t }}sessions) AS BIGINT) AS sessions,
        CAST(sum({{ t }}page_views) AS BIGINT) AS page_views,
        CAST(sum({{ t }}orders_with_traffic) AS BIGINT) AS orders_with_traffic,
        sum({{ t }}buy_box_weighted) AS buy_box_weighted,
        CAST(sum({{ t }}buy_box_weight) AS BIGINT) AS buy_box_weight,
        sum({{ t }}b2b_sales) AS b2b_sales,
        CAST(sum({{ t }}b2b_units) AS BIGINT) AS b2b_units
{%- endmacro %}

{% macro ad_sums_of_products(t='') %}
        CAST(sum({{ t }}ad_impressions) AS BIGINT) AS ad_impressions,
        CAST(sum({{ t }}ad_clicks) AS BIGINT) AS ad_clicks,
        CAST(sum({{ t }}ad_orders) AS BIGINT) AS ad_orders,
        CAST(sum({{ t }}ad_units) AS BIGINT) AS ad_units,
        sum({{ t }}ad_spend) AS ad_spend,
        sum({{ t }}ad_sales) AS ad_sales
{%- endmacro %}
