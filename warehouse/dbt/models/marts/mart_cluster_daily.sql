-- Seller and product-ad figures per keyword cluster, day and currency. A product in several
-- clusters counts in full in each one, so these rows overlap and do not add up to the account:
-- mart_cluster_coverage_daily has the de-duplicated clustered total and the unclustered rest.
WITH members AS (
    SELECT DISTINCT account_id, cluster, product
    FROM {{ source('lake', 'cluster_products') }}
),
joined AS (
    SELECT
        m.account_id,
        m.cluster,
        d.date,
        d.currency,
        count(*) FILTER (WHERE d.seller_rows > 0) AS seller_products,
        count(*) FILTER (WHERE d.product_ad_rows > 0) AS advertised_products,
        {{ seller_sums('d.', summed=true) }},
        {{ ad_sums('d.', summed=true) }}
    FROM {{ ref('int_product_daily') }} AS d
    JOIN members AS m ON m.account_id = d.account_id AND m.product = d.product
    GROUP BY m.account_id, m.cluster, d.date, d.currency
)
SELECT
    j.account_id,
    j.cluster,
    c.name AS cluster_name,
    j.date,
    j.currency,
    j.seller_products,
    j.advertised_products,
    j.sales,
    j.units,
    j.orders,
    j.sessions,
    j.page_views,
    {{ seller_conversion('j.orders', 'j.orders_with_traffic', 'j.sessions') }},
    round(safe_ratio(j.buy_box_weighted, j.buy_box_weight), 4) AS buy_box_percentage,
    j.b2b_sales,
    j.b2b_units,
    j.ad_impressions,
    j.ad_clicks,
    j.ad_orders,
    j.ad_units,
    j.ad_spend,
    j.ad_sales,
    {{ advertising_ratios('j.ad_spend', 'j.ad_sales', 'j.ad_clicks', 'j.ad_impressions', 'j.currency') }},
    safe_ratio(j.ad_spend, j.sales) AS tacos,
    j.orders_with_traffic,
    j.buy_box_weighted,
    j.buy_box_weight
FROM joined AS j
LEFT JOIN {{ source('lake', 'clusters') }} AS c ON c.account_id = j.account_id AND c.id = j.cluster
