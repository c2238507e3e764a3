{#- The columns of a row of product sums (int_product_daily's, or their sums over products):
    the seller's figures and conversion, the product ads' figures beside them, their ratios
    recomputed and TACOS = ad spend / the seller's sales of the row (never across currencies),
    then the parts a caller needs to add rows up again. `t` is the alias with its dot, or '';
    `buy_box`: with the page-view weighted buy-box share and its parts; `after_buy_box`: the
    caller's own columns placed after it (mart_product_daily's stock). One projection for the
    product, cluster and coverage marts. -#}
{% macro product_figures(t='', buy_box=true, after_buy_box=[]) %}
    {%- for name in ['sales', 'units', 'orders', 'sessions', 'page_views'] %}
    {{ t }}{{ name }},
    {%- endfor %}
    {{ seller_conversion(t ~ 'orders', t ~ 'orders_with_traffic', t ~ 'sessions') }},
    {%- if buy_box %}
    round(safe_ratio({{ t }}buy_box_weighted, {{ t }}buy_box_weight), 4) AS buy_box_percentage,
    {%- endif %}
    {%- for name in after_buy_box + ['b2b_sales', 'b2b_units'] %}
    {{ t }}{{ name }},
    {%- endfor %}
    {%- for name in ['impressions', 'clicks', 'orders', 'units', 'spend', 'sales'] %}
    {{ t }}ad_{{ name }},
    {%- endfor %}
    {{ advertising_ratios(t ~ 'ad_spend', t ~ 'ad_sales', t ~ 'ad_clicks', t ~ 'ad_impressions', t ~ 'currency') }},
    safe_ratio({{ t }}ad_spend, {{ t }}sales) AS tacos,
    {{ t }}orders_with_traffic
    {%- if buy_box %},
    {{ t }}buy_box_weighted,
    {{ t }}buy_box_weight
    {%- endif %}
{%- endmacro %}
