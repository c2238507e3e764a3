-- What the service changed about each day after first reporting it, per account, currency,
-- table and day: rows that changed, came or went, and the money that moved (spend, sales, the
-- seller economics block), first reported against now. Built on restatements (one row per cell
-- a run changed in a day it had already published) and the tables as they hold the day now:
-- first reported = now - every change since, exactly (money is DECIMAL throughout).
{% set money = {
    'spend': 'cost',
    'sales': 'sales',
    'net_sales': 'net_sales',
    'fees': 'amazon_fees',
    'margin_before_ads': 'margin_before_ads',
} %}
{% set daily_facts = {
    'campaign_metrics': ['cost', 'sales'],
    'adgroup_metrics': ['cost', 'sales'],
    'target_metrics': ['cost', 'sales'],
    'product_ad_metrics': ['cost', 'sales'],
    'search_term_metrics': ['cost', 'sales'],
    'workflow_performance': ['cost', 'sales'],
    'seller_product_metrics': ['sales', 'net_sales', 'amazon_fees', 'margin_before_ads'],
    'vendor_product_metrics': [],
} %}
WITH cells AS (
    SELECT
        *,
        coalesce(TRY_CAST(value_after AS DECIMAL(18, 4)), 0)
            - coalesce(TRY_CAST(value_before AS DECIMAL(18, 4)), 0) AS change
    FROM {{ source('lake', 'restatements') }}
),
restated AS (
    SELECT
        table_name,
        account_id,
        currency,
        date,
        count(DISTINCT row_key) FILTER (WHERE kind IN ('correction', 'arrival')) AS rows_changed,
        count(DISTINCT row_key) FILTER (WHERE kind = 'appeared') AS rows_appeared,
        count(DISTINCT row_key) FILTER (WHERE kind = 'disappeared') AS rows_disappeared,
        count(*) FILTER (WHERE kind = 'correction') AS cells_corrected,
        count(*) FILTER (WHERE kind = 'arrival') AS cells_arrived,
        {% for name, column in money.items() %}
        sum(change) FILTER (WHERE column_name = '{{ column }}') AS {{ name }}_change,
        {% endfor %}
        count(DISTINCT run_id) AS restating_runs,
        min(date_diff('day', date, CAST(_extracted_at AS DATE))) AS first_change_days_after,
        max(date_diff('day', date, CAST(_extracted_at AS DATE))) AS last_change_days_after,
        max(_extracted_at) AS last_restated_at
    FROM cells
    GROUP BY ALL
),
now AS (
    {% for table, columns in daily_facts.items() %}
    SELECT
        '{{ table }}' AS table_name,
        account_id,
        currency,
        date,
        {% for name, column in money.items() %}
        {% if column in columns %}sum({{ column }}){% else %}CAST(NULL AS DECIMAL(38, 4)){% endif %} AS {{ name }}_now{{ ',' if not loop.last }}
        {% endfor %}
    FROM {{ source('lake', table) }}
    WHERE (account_id, currency, date) IN (
        SELECT (account_id, currency, date) FROM restated WHERE table_name = '{{ table }}'
    )
    GROUP BY ALL
    {% if not loop.last %}UNION ALL{% endif %}
    {% endfor %}
)
SELECT
    r.account_id,
    r.currency,
    r.table_name,
    r.date,
    r.rows_changed,
    r.rows_appeared,
    r.rows_disappeared,
    r.cells_corrected,
    r.cells_arrived,
    {% for name in money %}
    CASE
        WHEN n.{{ name }}_now IS NOT NULL OR r.{{ name }}_change IS NOT NULL
        THEN coalesce(n.{{ name }}_now, 0) - coalesce(r.{{ name }}_change, 0)
    END AS {{ name }}_first_reported,
    n.{{ name }}_now,
    r.{{ name }}_change,
    {% endfor %}
    r.restating_runs,
    r.first_change_days_after,
    r.last_change_days_after,
    r.last_restated_at
FROM restated AS r
LEFT JOIN now AS n USING (table_name, account_id, currency, date)
