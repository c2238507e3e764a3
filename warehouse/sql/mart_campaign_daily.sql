-- One row per campaign, day, currency and ad product (the natural key of campaign_metrics),
-- with the campaign's name and state, and its ratios recomputed from the row's own sums.
CREATE VIEW mart_campaign_daily AS
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
    safe_ratio(m.cost, m.sales) AS acos,
    safe_ratio(m.sales, m.cost) AS roas,
    safe_ratio(m.clicks, m.impressions) AS ctr,
    money_ratio(m.cost, m.clicks, m.currency) AS cpc,
    safe_ratio(m.orders, m.clicks) AS conversion_rate,
    m.top_of_search_is
FROM campaign_metrics AS m
LEFT JOIN campaigns AS c ON c.account_id = m.account_id AND c.id = m.campaign
LEFT JOIN countries AS k ON k.account_id = m.account_id AND k.id = m.country;

COMMENT ON VIEW mart_campaign_daily IS
'One row per campaign, day, currency and ad product, with campaign_name and campaign_state from campaigns (NULL if the campaign is no longer listed). spend and sales are in the row''s currency. acos (spend / sales), roas, ctr (clicks / impressions), conversion_rate (orders / clicks) are fractions recomputed from the row, NULL on a zero denominator; cpc is money rounded half to even to the currency''s digits. To roll campaigns or days up, sum the counts and money (within one currency) and recompute the ratios from the sums: never average them. top_of_search_is is the campaign''s impression share for the day: never sum it; weight it by impressions across days.';
