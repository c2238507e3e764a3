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
    {{ product_figures('j.', after_buy_box=['stock']) }}
FROM {{ ref('int_product_daily') }} AS j
LEFT JOIN {{ source('lake', 'products') }} AS p ON p.account_id = j.account_id AND p.id = j.product
-- Product ads without a catalog product are no product's advertising.
WHERE j.product IS NOT NULL OR j.seller_rows > 0
