-- The optimizer's bid changes (one row per target and day, net of the day's moves) next to the
-- objective the campaign's optimizer configuration pursues.
SELECT
    h.account_id,
    h.date,
    h.campaign,
    c.name AS campaign_name,
    c.ad_product,
    c.budget_currency AS currency,
    c.optimization_config_objective_type AS objective_type,
    c.optimization_config_objective_value AS objective_value,
    c.optimization_config_objective_max_acos_pct AS objective_max_acos_pct,
    c.optimization_config_objective_max_acos_pct / 100 AS objective_max_acos,
    c.optimization_config_limits_min_bid AS min_bid,
    c.optimization_config_limits_max_bid AS max_bid,
    c.optimization_config_optimizing_since AS optimizing_since,
    h.entity_type,
    h.id AS target,
    t.expression AS target_expression,
    t.match_type,
    h.adgroup,
    g.name AS adgroup_name,
    h.first_bid,
    h.last_bid,
    h.net_change,
    safe_ratio(h.net_change, h.first_bid) AS net_change_ratio,
    h.direction,
    h.change_count,
    h.first_change_at,
    h.last_change_at,
    h.last_reason,
    h.last_scenario
FROM {{ source('lake', 'optimization_history') }} AS h
LEFT JOIN {{ source('lake', 'campaigns') }} AS c ON c.account_id = h.account_id AND c.id = h.campaign
LEFT JOIN {{ source('lake', 'targets') }} AS t ON t.account_id = h.account_id AND t.id = h.id
LEFT JOIN {{ source('lake', 'adgroups') }} AS g ON g.account_id = h.account_id AND g.id = h.adgroup
