-- What each workflow achieved for each campaign it processes, day by day, beside the objective
-- it works to: only from the campaign's optimizing_since on, since figures before it are not
-- the workflow's doing. Ratios are recomputed from the row's sums, never averaged.
SELECT
    p.account_id,
    p.date,
    p.workflow,
    w.name AS workflow_name,
    w.description_key AS workflow_kind,
    p.campaign,
    c.name AS campaign_name,
    p.currency,
    p.ad_product,
    p.optimizing_since,
    p.objective_type,
    p.objective_value,
    p.impressions,
    p.clicks,
    p.orders,
    p.units,
    p.cost AS spend,
    p.sales,
    {{ advertising_ratios('p.cost', 'p.sales', 'p.clicks', 'p.impressions', 'p.currency') }},
    safe_ratio(p.orders, p.clicks) AS conversion_rate,
    CASE upper(p.objective_type)
        WHEN 'ACOS' THEN safe_ratio(p.cost, p.sales)
        WHEN 'ROAS' THEN safe_ratio(p.sales, p.cost)
    END AS realized_value,
    CASE upper(p.objective_type)
        WHEN 'ACOS' THEN safe_ratio(p.cost, p.sales) <= p.objective_value
        WHEN 'ROAS' THEN safe_ratio(p.sales, p.cost) >= p.objective_value
    END AS on_target
FROM {{ source('lake', 'workflow_performance') }} AS p
LEFT JOIN {{ source('lake', 'workflows') }} AS w
    ON w.account_id = p.account_id AND w.id = p.workflow
LEFT JOIN {{ source('lake', 'campaigns') }} AS c
    ON c.account_id = p.account_id AND c.id = p.campaign
WHERE p.date >= p.optimizing_since
