-- Every change sent to the marketplace (advertising_changes), with names instead of ids and
-- readable labels; actor is already a pseudonym for people (person:…).
CREATE VIEW mart_change_log AS
SELECT
    x.account_id,
    x.date,
    x.changed_at,
    x.entity_type,
    x.entity_id,
    CASE x.entity_type
        WHEN 'campaign' THEN c.name
        WHEN 'adgroup' THEN g.name
        WHEN 'target' THEN t.expression
        WHEN 'product_ad' THEN concat_ws(' / ', p.asin, p.sku)
    END AS entity_name,
    x.campaign,
    c.name AS campaign_name,
    x.adgroup,
    g.name AS adgroup_name,
    x.connection,
    n.name AS connection_name,
    x.country,
    k.code AS country_code,
    x.field,
    CASE x.field
        WHEN 'state' THEN 'state'
        WHEN 'dailyBudget' THEN 'daily budget'
        WHEN 'name' THEN 'name'
        WHEN 'defaultBid' THEN 'default bid'
        WHEN 'bid' THEN 'bid'
        WHEN 'keyword' THEN 'keyword added'
        WHEN 'negativeKeyword' THEN 'negative keyword added'
        WHEN 'placementTopOfSearch' THEN 'top-of-search placement adjustment (%)'
        ELSE x.field
    END AS field_label,
    x.old_value,
    x.new_value,
    concat(coalesce(x.old_value, '(none)'), ' → ', coalesce(x.new_value, '(none)')) AS change,
    CASE
        WHEN x.field IN ('dailyBudget', 'defaultBid', 'bid')
            THEN try_cast(x.new_value AS DECIMAL(18, 4)) - try_cast(x.old_value AS DECIMAL(18, 4))
    END AS amount_change,
    CASE WHEN x.field IN ('dailyBudget', 'defaultBid', 'bid') THEN c.budget_currency END
        AS currency,
    x.source,
    CASE x.source
        WHEN 'front' THEN 'application (a person)'
        WHEN 'workflow' THEN 'optimizer workflow'
        WHEN 'system' THEN 'internal process'
        WHEN 'public-api' THEN 'public API'
        WHEN 'mcp' THEN 'assistant (MCP)'
        ELSE x.source
    END AS source_label,
    x.actor,
    split_part(x.actor, ':', 1) AS actor_kind,
    x.result,
    x.result = 'applied' AS applied,
    x.error,
    x.correlation_id
FROM advertising_changes AS x
LEFT JOIN campaigns AS c ON c.account_id = x.account_id AND c.id = x.campaign
LEFT JOIN adgroups AS g ON g.account_id = x.account_id AND g.id = x.adgroup
LEFT JOIN targets AS t
    ON t.account_id = x.account_id AND t.id = x.entity_id AND x.entity_type = 'target'
LEFT JOIN product_ads AS p
    ON p.account_id = x.account_id AND p.id = x.entity_id AND x.entity_type = 'product_ad'
LEFT JOIN connections AS n ON n.account_id = x.account_id AND n.id = x.connection
LEFT JOIN countries AS k ON k.account_id = x.account_id AND k.id = x.country;

COMMENT ON VIEW mart_change_log IS
'One row per change sent to the marketplace (advertising_changes), applied or failed, whatever its source, kept beyond the service''s 12 months. Ids are joined to names: entity_name (campaign or ad group name, target expression, product ad ASIN / SKU), campaign_name, adgroup_name, connection_name, country_code; NULL when the entity is no longer listed. field_label and source_label are readable forms of field and source; change is "old → new"; amount_change is new - old for money fields (bid, default bid, daily budget) in currency (the campaign''s); applied is result = applied, and failed rows carry the marketplace''s message in error. actor is who made the change: person:… is a keyed pseudonym of an e-mail address (never stored in clear), otherwise workflow:…, system:…, api_key:… or oauth_token:…; actor_kind is the part before the colon. correlation_id joins the optimizer''s run (mart_bid_changes, optimization_history).';
