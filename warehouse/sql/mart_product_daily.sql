-- Seller sales and traffic of a product next to the advertising of the same product (its
-- product ads, summed over campaigns and ad products), per account, day and currency, with
-- TACOS = ad spend / total sales of that product, day and currency (never across currencies).
CREATE VIEW mart_product_daily AS
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
        sum(sales) AS sales,
        CAST(sum(units) AS BIGINT) AS units,
        CAST(sum(orders) AS BIGINT) AS orders,
        CAST(sum(sessions) AS BIGINT) AS sessions,
        CAST(sum(page_views) AS BIGINT) AS page_views,
        CAST(sum(orders) FILTER (WHERE sessions IS NOT NULL) AS BIGINT) AS orders_with_traffic,
        sum(buy_box_percentage * page_views)
            FILTER (WHERE buy_box_percentage IS NOT NULL AND page_views IS NOT NULL)
            AS buy_box_weighted,
        CAST(sum(page_views) FILTER (WHERE buy_box_percentage IS NOT NULL) AS BIGINT)
            AS buy_box_weight,
        CAST(sum(stock) AS BIGINT) AS stock,
        sum(b2b_sales) AS b2b_sales,
        CAST(sum(b2b_units) AS BIGINT) AS b2b_units
    FROM seller_product_metrics
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
        CAST(sum(impressions) AS BIGINT) AS ad_impressions,
        CAST(sum(clicks) AS BIGINT) AS ad_clicks,
        CAST(sum(orders) AS BIGINT) AS ad_orders,
        CAST(sum(units) AS BIGINT) AS ad_units,
        sum(cost) AS ad_spend,
        sum(sales) AS ad_sales
    FROM product_ad_metrics
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
    safe_ratio(j.orders, j.sessions) AS conversion_rate,
    safe_ratio(j.orders_with_traffic, j.sessions) AS conversion_rate_reported_traffic,
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
    safe_ratio(j.ad_spend, j.ad_sales) AS acos,
    safe_ratio(j.ad_sales, j.ad_spend) AS roas,
    money_ratio(j.ad_spend, j.ad_clicks, j.currency) AS cpc,
    safe_ratio(j.ad_spend, j.sales) AS tacos,
    j.orders_with_traffic,
    j.buy_box_weighted,
    j.buy_box_weight
FROM joined AS j
LEFT JOIN products AS p ON p.account_id = j.account_id AND p.id = j.product;

COMMENT ON VIEW mart_product_daily IS
'One row per account, day, catalog product and currency: the product''s seller sales and traffic (seller_product_metrics) beside the advertising of the same product (product_ad_metrics joined by product, summed over its product ads, campaigns and ad products). tacos = ad_spend / sales of the same product, day and currency (NULL when sales are 0 or NULL); acos = ad_spend / ad_sales; never across currencies. Seller columns are NULL when the product had no seller row that day (seller_rows = 0, e.g. vendor products), ad columns NULL when it had no product-ad row (product_ad_rows = 0): NULL is "no row", not 0, and sum() skips it. conversion_rate = orders / sessions of the row, as the service defines it (spec 2.9; NULL when sessions are NULL or 0); conversion_rate_reported_traffic = orders_with_traffic / sessions, counting only the orders of rows whose traffic was reported (the two differ when a row sums seller rows with and without traffic); buy_box_percentage is weighted by page views; stock is the day''s stock of the product (one country). To roll up, sum and recompute: tacos = sum(ad_spend) / sum(sales); conversion_rate = sum(orders) / sum(sessions) (the service''s answer for that grain); conversion_rate_reported_traffic = sum(orders_with_traffic) / sum(sessions); buy_box_percentage = sum(buy_box_weighted) / sum(buy_box_weight); stock of a period is the last day''s, never a sum over days.';
