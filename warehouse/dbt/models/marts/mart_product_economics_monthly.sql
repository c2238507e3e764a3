-- Seller economics per product, calendar month and currency, with how complete the month is.
-- Economics arrive 48-72 hours late (pending), some days never get them (missing), storage
-- fees are booked on one day of the month and refunds on their refund day: margins mean
-- something over a whole month whose days are all available.
WITH held AS (
    SELECT
        account_id,
        CAST(date_trunc('month', date) AS DATE) AS month,
        min(date) AS first_day,
        max(date) AS last_day
    FROM {{ source('lake', 'seller_product_metrics') }}
    GROUP BY ALL
),
monthly AS (
    SELECT
        account_id,
        product,
        asin,
        sku,
        connection,
        country,
        CAST(date_trunc('month', date) AS DATE) AS month,
        currency,
        count(*) AS days_with_rows,
        count(*) FILTER (WHERE economics_status = economics_available()) AS days_available,
        count(*) FILTER (WHERE economics_status = economics_pending()) AS days_pending,
        count(*) FILTER (WHERE economics_status = economics_missing()) AS days_missing,
        count(*) FILTER (WHERE storage_fee > 0) AS storage_fee_days,
        sum(sales) AS sales,
        CAST(sum(units) AS BIGINT) AS units,
        sum(net_sales) AS net_sales,
        sum(amazon_fees) AS fees,
        sum(referral_fee) AS referral_fee,
        sum(fba_fulfilment_fee) AS fba_fulfilment_fee,
        sum(storage_fee) AS storage_fee,
        sum(other_fees) AS other_fees,
        sum(margin_before_ads) AS margin_before_ads,
        sum(refunded_sales) AS refunded_sales,
        sum(net_units) AS net_units,
        CAST(sum(refunded_units) AS BIGINT) AS refunded_units
    FROM {{ source('lake', 'seller_product_metrics') }}
    GROUP BY account_id, product, asin, sku, connection, country, month, currency
)
SELECT
    m.account_id,
    m.product,
    m.asin,
    m.sku,
    m.connection,
    m.country,
    m.month,
    m.currency,
    h.first_day,
    h.last_day,
    CAST(dayofmonth(last_day(m.month)) AS BIGINT) AS days_in_month,
    (h.first_day = m.month AND h.last_day = last_day(m.month)) AS whole_month,
    m.days_with_rows,
    m.days_available,
    m.days_pending,
    m.days_missing,
    CASE
        WHEN m.days_pending > 0 THEN 'pending'
        WHEN h.first_day > m.month OR h.last_day < last_day(m.month) THEN 'partial month'
        WHEN m.days_missing > 0 THEN 'missing days'
        ELSE 'complete'
    END AS completeness,
    m.storage_fee_days,
    m.sales,
    m.units,
    m.net_sales,
    m.fees,
    m.referral_fee,
    m.fba_fulfilment_fee,
    m.storage_fee,
    m.other_fees,
    m.margin_before_ads,
    m.refunded_sales,
    m.net_units,
    m.refunded_units,
    safe_ratio(m.margin_before_ads, m.net_sales) AS margin_rate
FROM monthly AS m
JOIN held AS h ON h.account_id = m.account_id AND h.month = m.month
