-- The optimizer's bid changes (one row per target and day, net of the day's moves) next to the
-- objective the campaign's optimizer configuration pursues.
CREATE VIEW mart_bid_changes AS
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
FROM optimization_history AS h
LEFT JOIN campaigns AS c ON c.account_id = h.account_id AND c.id = h.campaign
LEFT JOIN targets AS t ON t.account_id = h.account_id AND t.id = h.id
LEFT JOIN adgroups AS g ON g.account_id = h.account_id AND g.id = h.adgroup;

COMMENT ON VIEW mart_bid_changes IS
'One row per target and day the optimizer moved its bid (optimization_history, kept beyond the service''s 90 days), net of the day: first_bid before the first change, last_bid after the last, net_change and net_change_ratio (net_change / first_bid, NULL when first_bid is 0), direction (a bid raised then capped back is unchanged with change_count 2). Beside it, the campaign''s current optimizer objective from campaigns.optimization_config_*: objective_type (ACOS, ROAS, IMPRESSIONS, ORDERS), objective_value, objective_max_acos_pct and objective_max_acos (the same ceiling as a fraction), the bid limits; they describe the configuration now, not on the day of the change. Bids are money in the campaign''s currency (currency = its budget currency); optimizing_since is when a workflow first really touched the campaign: changes before it are not the optimizer''s doing. NULL campaign columns mean the campaign is no longer listed.';
