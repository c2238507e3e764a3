-- The account's seller and product-ad figures per day and currency split in two parts that add
-- up exactly to the account total: the products in at least one cluster, each counted once
-- ('clustered, de-duplicated'), and the rest ('unclustered': in no cluster, or no catalog
-- product).
WITH clustered AS (
    SELECT DISTINCT account_id, product
    FROM {{ source('lake', 'cluster_products') }}
),
seller AS (
    SELECT
        s.account_id,
        s.date,
        s.currency,
        CASE
            WHEN k.product IS NULL THEN 'unclustered'
            ELSE 'clustered, de-duplicated'
        END AS scope,
        count(DISTINCT s.product) AS seller_products,
        count(*) AS seller_rows,
        {{ seller_sums('s.') }}
    FROM {{ source('lake', 'seller_product_metrics') }} AS s
    LEFT JOIN clustered AS k ON k.account_id = s.account_id AND k.product = s.product
    GROUP BY ALL
),
ads AS (
    SELECT
        a.account_id,
        a.date,
        a.currency,
        CASE
            WHEN k.product IS NULL THEN 'unclustered'
            ELSE 'clustered, de-duplicated'
        END AS scope,
        count(DISTINCT a.product) AS advertised_products,
        count(*) AS product_ad_rows,
        {{ ad_sums('a.') }}
    FROM {{ source('lake', 'product_ad_metrics') }} AS a
    LEFT JOIN clustered AS k ON k.account_id = a.account_id AND k.product = a.product
    GROUP BY ALL
)
SELECT
    coalesce(s.account_id, a.account_id) AS account_id,
    coalesce(s.date, a.date) AS date,
    coalesce(s.currency, a.currency) AS currency,
    coalesce(s.scope, a.scope) AS scope,
    coalesce(s.seller_products, 0) AS seller_products,
    coalesce(s.seller_rows, 0) AS seller_rows,
    coalesce(a.advertised_products, 0) AS advertised_products,
    coalesce(a.product_ad_rows, 0) AS product_ad_rows,
    s.sales,
    s.units,
    s.orders,
    s.sessions,
    s.page_views,
    {{ seller_conversion('s.orders', 's.orders_with_traffic', 's.sessions') }},
    s.b2b_sales,
    s.b2b_units,
    a.ad_impressions,
    a.ad_clicks,
    a.ad_orders,
    a.ad_units,
    a.ad_spend,
    a.ad_sales,
    {{ advertising_ratios(
        'a.ad_spend', 'a.ad_sales', 'a.ad_clicks', 'a.ad_impressions',
        'coalesce(s.currency, a.currency)'
    ) }},
    safe_ratio(a.ad_spend, s.sales) AS tacos,
    s.orders_with_traffic
FROM seller AS s
FULL JOIN ads AS a
    ON a.account_id = s.account_id
    AND a.date = s.date
    AND a.currency = s.currency
    AND a.scope = s.scope
