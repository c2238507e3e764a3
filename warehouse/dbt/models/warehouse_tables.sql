-- What the warehouse holds, one row per table: its rows, the days it covers and when its
-- newest row was fetched. Reads every table, so any table the pipeline updates refreshes the
-- warehouse (tests/warehouse/test_marts.py checks these lists against the registry).
{% set dated_tables = [
    'adgroup_metrics', 'advertising_changes', 'campaign_metrics', 'optimization_history',
    'optimization_other_changes', 'platform_changes', 'product_ad_metrics', 'restatements',
    'search_term_metrics', 'seller_product_metrics', 'target_metrics', 'vendor_product_metrics',
    'workflow_performance'
] %}
{% set current_state_tables = [
    'accounts', 'adgroups', 'advertising_products', 'brands', 'campaigns',
    'cluster_keywords', 'cluster_products', 'clusters', 'connections', 'countries',
    'portfolios', 'product_ads', 'products', 'search_terms', 'seller_products', 'targets',
    'task_items', 'tasks', 'vendor_products', 'workflow_campaigns', 'workflows'
] %}
{% for table in dated_tables %}
SELECT
    '{{ table }}' AS table_name,
    'dated' AS kind,
    count(*) AS rows,
    min(date) AS first_date,
    max(date) AS last_date,
    max(_extracted_at) AS last_extracted_at
FROM {{ source('lake', table) }}
UNION ALL
{% endfor %}
{% for table in current_state_tables %}
SELECT
    '{{ table }}' AS table_name,
    'current state' AS kind,
    count(*) AS rows,
    CAST(NULL AS DATE) AS first_date,
    CAST(NULL AS DATE) AS last_date,
    max(_extracted_at) AS last_extracted_at
FROM {{ source('lake', table) }}
{% if not loop.last %}UNION ALL{% endif %}
{% endfor %}
