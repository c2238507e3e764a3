-- Seller and product-ad figures per keyword cluster, day and currency. A product in several
-- clusters counts in full in each one, so these rows overlap and do not add up to the account:
-- mart_cluster_coverage_daily has the de-duplicated clustered total and the unclustered rest.
WITH members AS (
    SELECT DISTINCT account_id, cluster, product
    FROM {{ source('lake', 'cluster_products') }}
),
seller AS (
    SELECT
        m.account_id,
        m.cluster,
        s.date,
        s.currency,
        count(DISTINCT s.product) AS seller_products,
        {{ seller_sums('s.') }}
    FROM {{ source('lake', 'seller_product_metrics') }} AS s
    JOIN members AS m ON m.account_id = s.account_id AND m.product = s.product
    GROUP BY m.account_id, m.cluster, s.date, s.currency
),
ads AS (
    SELECT
        m.account_id,
        m.cluster,
        a.date,
        a.currency,
        count(DISTINCT a.product) AS advertised_products,
        {{ ad_sums('a.') }}
    FROM {{ source('lake', 'product_ad_metrics') }} AS a
    JOIN members AS m ON m.account_id = a.account_id AND m.product = a.product
    GROUP BY m.account_id, m.cluster, a.date, a.currency
),
joined AS (
    SELECT
        coalesce(s.account_id, a.account_id) AS account_id,
        coalesce(s.cluster, a.cluster) AS cluster,
        coalesce(s.date, a.date) AS date,
        coalesce(s.currency, a.currency) AS currency,
        coalesce(s.seller_products, 0) AS seller_products,
        coalesce(a.advertised_products, 0) AS advertised_products,
        s.* EXCLUDE (account_id, cluster, date, currency, seller_products),
        a.* EXCLUDE (account_id, cluster, date, currency, advertised_products)
    FROM seller AS s
    FULL JOIN ads AS a
        ON a.account_id = s.account_id
        AND a.cluster = s.cluster
        AND a.date = s.date
        AND a.currency = s.currency
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
