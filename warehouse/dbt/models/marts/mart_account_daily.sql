-- Advertising per account, day, currency and ad product (campaign metrics).
-- Currencies are never added together; ratios are recomputed from the sums, never averaged,
-- and are NULL when their denominator is 0; cpc is money, rounded half to even to the
-- currency's digits as the service rounds it. A sum is NULL only when no row of the group
-- reported the measure (new_to_brand_sales of SP, viewable_impressions of SP); rows that did
-- not report it are skipped. top_of_search_is is a campaign's share and is not summed here.
SELECT
    account_id,
    date,
    currency,
    ad_product,
    count(*) AS campaigns,
    CAST(sum(impressions) AS BIGINT) AS impressions,
    CAST(sum(clicks) AS BIGINT) AS clicks,
    CAST(sum(orders) AS BIGINT) AS orders,
    CAST(sum(units) AS BIGINT) AS units,
    sum(cost) AS spend,
    sum(sales) AS sales,
    sum(new_to_brand_sales) AS new_to_brand_sales,
    CAST(sum(new_to_brand_purchases) AS BIGINT) AS new_to_brand_purchases,
    CAST(sum(detail_page_views) AS BIGINT) AS detail_page_views,
    CAST(sum(viewable_impressions) AS BIGINT) AS viewable_impressions,
    {{ advertising_ratios('sum(cost)', 'sum(sales)', 'sum(clicks)', 'sum(impressions)', 'currency') }},
    safe_ratio(sum(orders), sum(clicks)) AS conversion_rate
FROM {{ source('lake', 'campaign_metrics') }}
GROUP BY account_id, date, currency, ad_product
