-- Seller sales and traffic of a product next to the advertising of the same product (its
-- product ads, summed over campaigns and ad products), per account, day and currency, with
-- TACOS = ad spend / total sales of that product, day and currency (never across currencies).
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
FROM {{ ref('int_product_daily') }} AS j
LEFT JOIN {{ source('lake', 'products') }} AS p ON p.account_id = j.account_id AND p.id = j.product
-- Product ads without a catalog product are no product's advertising.
WHERE j.product IS NOT NULL OR j.seller_rows > 0
