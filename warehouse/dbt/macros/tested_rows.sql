{#- dbt's hook for a test's `where` (overridden here): a test whose `where` is 'tested_rows'
    reads only its model's rows from the var `adwh_tested_since` on. A build of every model sets
    it to the first date (every row is tested), a build of what changed (warehouse/marts.py)
    to the first day it read again from the lake, so a daily build tests the days it changed,
    not the years held. A constant date, which DuckDB pushes into the tables' scans (a
    subquery in its place is not pushed: the whole mart is computed).
    Models whose rows are not keyed by day say which rows a day touches: a period's row, from
    the first tested day's period on (a day touches its week, month, quarter and year); every
    row of a mart of the current state (tasks' funnel), which any build may change. -#}
{% macro get_where_subquery(relation) -%}
    {%- if config.get('where') != 'tested_rows' -%}
        {%- do return(dbt.default__get_where_subquery(relation)) -%}
    {%- endif -%}
    {%- set since = "DATE '" ~ var('adwh_tested_since', '0001-01-01') ~ "'" -%}
    {%- set by_period = {
        'mart_account_periods': "date >= CAST(date_trunc('year', " ~ since ~ ") AS DATE)",
        'mart_product_economics_monthly':
            "month >= CAST(date_trunc('month', " ~ since ~ ") AS DATE)",
        'mart_task_funnel': "TRUE",
    } -%}
    {%- set rows = by_period.get(relation.identifier, 'date >= ' ~ since) -%}
    {%- do return('(SELECT * FROM ' ~ relation ~ ' WHERE ' ~ rows ~ ') dbt_subquery') -%}
{%- endmacro %}
