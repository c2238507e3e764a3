{#- The advertising ratios of a row of sums, recomputed (never averaged) and NULL on a zero or
    NULL denominator: acos = spend / sales, roas = sales / spend, ctr = clicks / impressions,
    cpc = spend / clicks as money of the row's currency, rounded half to even. One place for
    the rule; every mart with ad figures calls it. -#}
{% macro advertising_ratios(spend, sales, clicks, impressions, currency) %}
    safe_ratio({{ spend }}, {{ sales }}) AS acos,
    safe_ratio({{ sales }}, {{ spend }}) AS roas,
    safe_ratio({{ clicks }}, {{ impressions }}) AS ctr,
    money_ratio({{ spend }}, {{ clicks }}, {{ currency }}) AS cpc
{%- endmacro %}

{#- The seller's conversion: orders / sessions of the row, as the service defines it, and
    beside it the orders of rows whose traffic was reported over those sessions. -#}
{% macro seller_conversion(orders, orders_with_traffic, sessions) %}
    safe_ratio({{ orders }}, {{ sessions }}) AS conversion_rate,
    safe_ratio({{ orders_with_traffic }}, {{ sessions }}) AS conversion_rate_reported_traffic
{%- endmacro %}
