-- Advertising spend and sales per account, day, currency and ad product.
-- Currencies are never added together; ratios are recomputed from the sums, never averaged,
-- and are NULL when their denominator is 0.
CREATE VIEW mart_account_daily AS
SELECT
    account_id,
    date,
    currency,
    ad_product,
    sum(impressions) AS impressions,
    sum(clicks) AS clicks,
    sum(orders) AS orders,
    sum(units) AS units,
    sum(cost) AS spend,
    sum(sales) AS sales,
    sum(cost) / nullif(sum(sales), 0) AS acos,
    sum(sales) / nullif(sum(cost), 0) AS roas,
    sum(clicks) / nullif(sum(impressions), 0) AS ctr,
    sum(cost) / nullif(sum(clicks), 0) AS cpc,
    sum(orders) / nullif(sum(clicks), 0) AS conversion_rate
FROM campaign_metrics
GROUP BY account_id, date, currency, ad_product;

COMMENT ON VIEW mart_account_daily IS
'Advertising per account, day, currency and ad product: spend and sales summed in their own currency; acos, roas, ctr, cpc and conversion_rate recomputed from the sums (NULL on a zero denominator).';
