-- Seller sales and traffic of a product next to the advertising of the same product (its
-- product ads, summed over campaigns and ad products), per account, day and currency, with
-- TACOS = ad spend / total sales of that product, day and currency (never across currencies).
WITH seller AS (
    SELECT
        account_id,
        product,
        date,
        currency,
        any_value(asin) AS asin,
        any_value(sku) AS sku,
        any_value(connection) AS connection,
        any_value(country) AS country,
        count(*) AS seller_rows,
        {{ seller_sums() }},
        CAST(sum(stock) AS BIGINT) AS stock
    FROM {{ source('lake', 'seller_product_metrics') }}
    GROUP BY account_id, product, date, currency
),
ads AS (
    SELECT
        account_id,
        product,
        date,
        currency,
        any_value(asin) AS asin,
        count(*) AS product_ad_rows,
        {{ ad_sums() }}
    FROM {{ source('lake', 'product_ad_metrics') }}
    WHERE product IS NOT NULL
    GROUP BY account_id, product, date, currency
),
joined AS (
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
)
SELECT
    j.account_id,
    j.date,
    j.product,
    coalesce(j.asin, p.asin) AS asin,
    coalesce(j.sku, p.sku) AS sku,
    p.title,
    coalesce(j.connection, p.connection) AS connection,
    coalesce(j.country, p.country) AS country,
    j.currency,
    j.seller_rows,
    j.product_ad_rows,
    j.sales,
    j.units,
    j.orders,
    j.sessions,
    j.page_views,
    {{ seller_conversion('j.orders', 'j.orders_with_traffic', 'j.sessions') }},
    round(safe_ratio(j.buy_box_weighted, j.buy_box_weight), 4) AS buy_box_percentage,
    j.stock,
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
LEFT JOIN {{ source('lake', 'products') }} AS p ON p.account_id = j.account_id AND p.id = j.product
