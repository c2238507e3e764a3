{#- The entity histories' materialization: a view and its comments in one batch of statements.
    dbt's own view materialization makes a view in a dozen round trips (an intermediate view,
    renames, a backup dropped) and persist_docs adds a COMMENT ON per column: ~75 ms per
    history view, 21 views, in every build from nothing. A view holds no data, so replacing it
    in place is as safe; the comments are the yml's words, as persist_docs writes them
    (analysts' tools read them, tests/warehouse/test_marts.py compares them). -#}
{%- materialization history_view, adapter='duckdb' -%}
  {%- set target_relation = this.incorporate(type='view') -%}
  {{ run_hooks(pre_hooks) }}
  {% call statement('main') -%}
    CREATE OR REPLACE VIEW {{ target_relation }} AS (
{{ sql }}
    );
    COMMENT ON VIEW {{ target_relation }} IS {{ adwh_quoted(model.description) }};
    {%- for column in model.columns.values() %}
    COMMENT ON COLUMN {{ target_relation }}.{{ adapter.quote(column.name) }} IS {{ adwh_quoted(column.description) }};
    {%- endfor %}
  {%- endcall %}
  {{ run_hooks(post_hooks) }}
  {{ adapter.commit() }}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization -%}

{% macro adwh_quoted(text) -%}
'{{ text | replace("'", "''") }}'
{%- endmacro %}
