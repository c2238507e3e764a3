-- The seller and product-ad sums of each catalog product per account, day and currency: the one
-- pass over the two largest fact tables that mart_product_daily, mart_cluster_daily and
-- mart_cluster_coverage_daily share. Incremental: a build deletes and recomputes only the days
-- it read again from the lake, so a daily run's cost does not grow with the years held (a whole
-- table read again, or a change to this project, recomputes it all: warehouse/marts.py).
{% set sources = ['seller_product_metrics', 'product_ad_metrics'] %}
{% set grain = 'account_id, product, date, currency' %}
{% set recomputed = reloaded_days(sources) %}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    pre_hook="{% if is_incremental() %}DELETE FROM {{ this }} WHERE " ~ recomputed ~ "{% endif %}",
) }}
WITH seller AS (
    SELECT
        {{ grain }},
        any_value(asin) AS asin,
        any_value(sku) AS sku,
        any_value(connection) AS connection,
        any_value(country) AS country,
        count(*) AS seller_rows,
        {{ seller_sums() }},
        CAST(sum(stock) AS BIGINT) AS stock
    FROM {{ source('lake', 'seller_product_metrics') }}
    {% if is_incremental() %}WHERE {{ recomputed }}{% endif %}
    GROUP BY {{ grain }}
),
ads AS (
    SELECT
        {{ grain }},
        any_value(asin) AS asin,
        count(*) AS product_ad_rows,
        {{ ad_sums() }}
    FROM {{ source('lake', 'product_ad_metrics') }}
    {% if is_incremental() %}WHERE {{ recomputed }}{% endif %}
    GROUP BY {{ grain }}
)
-- Rows without a catalog product never join: their seller and product-ad sums stay in
-- separate rows of the day (product NULL), which only mart_cluster_coverage_daily counts.
SELECT
    coalesce(s.account_id, a.account_id) AS account_id,
    coalesce(s.product, a.product) AS product,
    coalesce(s.date, a.date) AS date,
    coalesce(s.currency, a.currency) AS currency,
    coalesce(s.asin, a.asin) AS asin,
    s.sku,
    s.connection,
    s.country,
    coalesce(s.seller_rows, 0) AS seller_rows,
    coalesce(a.product_ad_rows, 0) AS product_ad_rows,
    s.sales,
    s.units,
    s.orders,
    s.sessions,
    s.page_views,
    s.orders_with_traffic,
    s.buy_box_weighted,
    s.buy_box_weight,
    s.stock,
    s.b2b_sales,
    s.b2b_units,
    a.ad_impressions,
    a.ad_clicks,
    a.ad_orders,
    a.ad_units,
    a.ad_spend,
    a.ad_sales
FROM seller AS s
FULL JOIN ads AS a
    ON a.account_id = s.account_id
    AND a.product = s.product
    AND a.date = s.date
    AND a.currency = s.currency
