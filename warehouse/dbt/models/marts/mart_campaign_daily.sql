-- One row per campaign, day, currency and ad product (the natural key of campaign_metrics),
-- with the campaign's name and state, and its ratios recomputed from the row's own sums.
SELECT
    m.account_id,
    m.date,
    m.campaign,
    c.name AS campaign_name,
    c.state AS campaign_state,
    c.portfolio_id,
    m.currency,
    m.ad_product,
    m.connection,
    m.country,
    k.code AS country_code,
    m.impressions,
    m.clicks,
    m.orders,
    m.units,
    m.cost AS spend,
    m.sales,
    m.new_to_brand_sales,
    m.new_to_brand_purchases,
    m.detail_page_views,
    m.viewable_impressions,
    {{ advertising_ratios('m.cost', 'm.sales', 'm.clicks', 'm.impressions', 'm.currency') }},
    safe_ratio(m.orders, m.clicks) AS conversion_rate,
    m.top_of_search_is
FROM {{ source('lake', 'campaign_metrics') }} AS m
LEFT JOIN {{ source('lake', 'campaigns') }} AS c ON c.account_id = m.account_id AND c.id = m.campaign
LEFT JOIN {{ source('lake', 'countries') }} AS k ON k.account_id = m.account_id AND k.id = m.country
