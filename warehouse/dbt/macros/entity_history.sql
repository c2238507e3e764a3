{#- Each id's attribute values with the interval they held, from the dated snapshots of a
    current-state table (`<table>_snapshots`: one per account and day a run took it).

    The service answers only "what is it now"; the runs keep what it said each day. A new
    interval starts where an attribute changed (IS DISTINCT FROM: NULL equals NULL, lists and
    structs compare whole) or where the id comes back after a snapshot of its account without
    it. `valid_to` is the first snapshot day of the account that no longer held the values
    (they changed, or the id was absent), so intervals are [valid_from, valid_to); NULL while
    they still hold. Snapshots are days apart: a change is known to have happened after
    `previous_snapshot` and by `valid_from`, which is all the interval claims.

    With `change_log`, each interval is joined to the applied rows of the service's change log
    (advertising_changes) for the id logged from the previous snapshot's day up to the day
    before valid_from: the service's snapshot of a day is taken by its run in the morning, so a
    change logged on that day shows in the next snapshot. Failed changes changed nothing and
    are left out (spec 4.8: `result: failed` rows carry the marketplace's refusal).

    `stamped` (columns) and `stamped_keys` (per JSON column, keys of its top level) are what
    moves every day by nature (`NIGHTLY_STAMPS` in warehouse/history_models.py: the date of the
    optimizer's nightly run): kept, with their value in the interval's last snapshot, but a
    stamped column is never compared and a JSON column is compared without its stamped keys,
    so they open no interval and are never named in `changed_columns`. -#}
{% macro entity_history(table, key, attributes, change_log=false, stamped=[], stamped_keys={}) %}
{%- set id = (['account_id'] + key) | join(', ') -%}
{%- set compared = attributes | reject('in', stamped) | list -%}
WITH snapshots AS (
    SELECT * FROM {{ source('snapshots', table) }}
),

account_days AS (
    -- Each account's snapshot days, with the one before and the one after.
    SELECT
        account_id,
        date,
        lag(date) OVER (PARTITION BY account_id ORDER BY date) AS previous_day,
        lead(date) OVER (PARTITION BY account_id ORDER BY date) AS next_day
    FROM (SELECT DISTINCT account_id, date FROM snapshots)
),

compared AS (
    SELECT
        s.*,
        lag(s.date) OVER same_id AS seen_before,
        d.previous_day,
        CASE WHEN lag(s.date) OVER same_id IS NOT NULL THEN list_filter([
            {%- for column in compared %}
            {%- set value = entity_history_compared(column, stamped_keys.get(column, [])) %}
            CASE WHEN {{ value }} IS DISTINCT FROM lag({{ value }}) OVER same_id
                THEN '{{ column }}' END{{ ',' if not loop.last }}
            {%- endfor %}
        ], lambda name: name IS NOT NULL) END AS changed_columns
    FROM snapshots AS s
    JOIN account_days AS d USING (account_id, date)
    WINDOW same_id AS (PARTITION BY {{ id }} ORDER BY s.date)
),

versioned AS (
    SELECT
        *,
        sum(CASE
            WHEN seen_before IS NULL OR seen_before IS DISTINCT FROM previous_day
                OR len(changed_columns) > 0 THEN 1
            ELSE 0
        END) OVER (PARTITION BY {{ id }} ORDER BY date) AS version
    FROM compared
),

intervals AS (
    SELECT
        {{ id }},
        version,
        min(date) AS valid_from,
        max(date) AS last_seen,
        first(previous_day ORDER BY date) AS previous_snapshot,
        first(changed_columns ORDER BY date) AS changed_columns,
        count(*) AS snapshots
        {%- for column in attributes %},
        {#- a stamp's latest value; the others are the same on every day of the interval #}
        {{ 'last' if column in stamped or column in stamped_keys else 'first' -}}
        ("{{ column }}" ORDER BY date) AS "{{ column }}"
        {%- endfor %}
    FROM versioned
    GROUP BY ALL
)
{%- if change_log %},

logged AS (
    SELECT
        i.account_id,
        i.id,
        i.valid_from,
        count(*) AS logged_changes,
        list(DISTINCT c.field ORDER BY c.field) AS logged_fields,
        list(DISTINCT c.source ORDER BY c.source) AS logged_sources,
        list(c.id ORDER BY c.changed_at, c.id) AS change_ids
    FROM intervals AS i
    JOIN {{ source('lake', 'advertising_changes') }} AS c
        ON c.account_id = i.account_id
        AND c.entity_id = i.id
        AND c.date >= i.previous_snapshot
        AND c.date < i.valid_from
        AND c.result IS DISTINCT FROM 'failed'
    GROUP BY ALL
)
{%- endif %}

SELECT
    {%- for column in ['account_id'] + key %}
    i."{{ column }}",
    {%- endfor %}
    i.valid_from,
    d.next_day AS valid_to,
    d.next_day IS NULL AS is_current,
    i.previous_snapshot,
    i.snapshots,
    i.changed_columns,
    {%- for column in attributes %}
    i."{{ column }}"{{ ',' if change_log or not loop.last }}
    {%- endfor %}
    {%- if change_log %}
    coalesce(l.logged_changes, 0) AS logged_changes,
    l.logged_fields,
    l.logged_sources,
    l.change_ids
    {%- endif %}
FROM intervals AS i
JOIN account_days AS d ON d.account_id = i.account_id AND d.date = i.last_seen
{%- if change_log %}
LEFT JOIN logged AS l
    ON l.account_id = i.account_id AND l.id = i.id AND l.valid_from = i.valid_from
{%- endif %}
{% endmacro %}

{#- A snapshot's value of `column` as its history compares it: a JSON object without its
    stamped `keys` (a merge patch that sets them null removes them: json_remove is not in the
    DuckDB 1.x that analysts' shells read the views with); anything else whole. -#}
{% macro entity_history_compared(column, keys) -%}
{%- if keys -%}
CASE WHEN json_type(s."{{ column }}") = 'OBJECT'
                THEN json_merge_patch(s."{{ column }}", '{"{{ keys | join('":null,"') }}":null}')
                ELSE s."{{ column }}" END
{%- else -%}
s."{{ column }}"
{%- endif -%}
{%- endmacro %}
