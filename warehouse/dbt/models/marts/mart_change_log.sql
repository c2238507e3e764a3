-- Every change sent to the marketplace (advertising_changes), with names instead of ids and
-- readable labels; actor is already a pseudonym for people (person:…).
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
            THEN try_money(x.new_value) - try_money(x.old_value)
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
FROM {{ source('lake', 'advertising_changes') }} AS x
LEFT JOIN {{ source('lake', 'campaigns') }} AS c ON c.account_id = x.account_id AND c.id = x.campaign
LEFT JOIN {{ source('lake', 'adgroups') }} AS g ON g.account_id = x.account_id AND g.id = x.adgroup
LEFT JOIN {{ source('lake', 'targets') }} AS t
    ON t.account_id = x.account_id AND t.id = x.entity_id AND x.entity_type = 'target'
LEFT JOIN {{ source('lake', 'product_ads') }} AS p
    ON p.account_id = x.account_id AND p.id = x.entity_id AND x.entity_type = 'product_ad'
LEFT JOIN {{ source('lake', 'connections') }} AS n ON n.account_id = x.account_id AND n.id = x.connection
LEFT JOIN {{ source('lake', 'countries') }} AS k ON k.account_id = x.account_id AND k.id = x.country
