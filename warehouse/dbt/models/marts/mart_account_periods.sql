-- Advertising per account, ISO week, month, quarter and year, currency and ad product: the
-- daily mart rolled up. A period is labelled with its first calendar day, as the service labels
-- `granularity` (date_trunc('week', …) is the Monday of the ISO week). Edge periods are partial:
-- first_day and last_day say which days of the period the warehouse holds, `partial` is true
-- when that is not the whole calendar period. Ratios are recomputed from the period's sums.
WITH grains (grain) AS (
    VALUES ('weekly'), ('monthly'), ('quarterly'), ('yearly')
),
held AS (
    SELECT account_id, min(date) AS first_day, max(date) AS last_day
    FROM {{ source('lake', 'campaign_metrics') }}
    GROUP BY account_id
),
labelled AS (
    SELECT
        g.grain,
        CAST(
            CASE g.grain
                WHEN 'weekly' THEN date_trunc('week', d.date)
                WHEN 'monthly' THEN date_trunc('month', d.date)
                WHEN 'quarterly' THEN date_trunc('quarter', d.date)
                ELSE date_trunc('year', d.date)
            END AS DATE
        ) AS period_start,
        d.*
    FROM {{ ref('mart_account_daily') }} AS d
    CROSS JOIN grains AS g
),
summed AS (
    SELECT
        account_id,
        grain,
        period_start,
        CAST(
            CASE grain
                WHEN 'weekly' THEN period_start + INTERVAL 6 DAY
                WHEN 'monthly' THEN period_start + INTERVAL 1 MONTH - INTERVAL 1 DAY
                WHEN 'quarterly' THEN period_start + INTERVAL 3 MONTH - INTERVAL 1 DAY
                ELSE period_start + INTERVAL 1 YEAR - INTERVAL 1 DAY
            END AS DATE
        ) AS period_end,
        currency,
        ad_product,
        count(DISTINCT date) AS days_with_rows,
        CAST(sum(impressions) AS BIGINT) AS impressions,
        CAST(sum(clicks) AS BIGINT) AS clicks,
        CAST(sum(orders) AS BIGINT) AS orders,
        CAST(sum(units) AS BIGINT) AS units,
        sum(spend) AS spend,
        sum(sales) AS sales,
        sum(new_to_brand_sales) AS new_to_brand_sales,
        CAST(sum(new_to_brand_purchases) AS BIGINT) AS new_to_brand_purchases,
        CAST(sum(detail_page_views) AS BIGINT) AS detail_page_views,
        CAST(sum(viewable_impressions) AS BIGINT) AS viewable_impressions
    FROM labelled
    GROUP BY account_id, grain, period_start, currency, ad_product
)
SELECT
    s.account_id,
    s.grain,
    s.period_start AS date,
    s.period_end,
    greatest(s.period_start, h.first_day) AS first_day,
    least(s.period_end, h.last_day) AS last_day,
    CAST(least(s.period_end, h.last_day) - greatest(s.period_start, h.first_day) + 1 AS BIGINT)
        AS days,
    (h.first_day > s.period_start OR h.last_day < s.period_end) AS partial,
    s.currency,
    s.ad_product,
    s.days_with_rows,
    s.impressions,
    s.clicks,
    s.orders,
    s.units,
    s.spend,
    s.sales,
    s.new_to_brand_sales,
    s.new_to_brand_purchases,
    s.detail_page_views,
    s.viewable_impressions,
    {{ advertising_ratios('s.spend', 's.sales', 's.clicks', 's.impressions', 's.currency') }},
    safe_ratio(s.orders, s.clicks) AS conversion_rate
FROM summed AS s
JOIN held AS h ON h.account_id = s.account_id
