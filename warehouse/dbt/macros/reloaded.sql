{#- The rows of the days the build read again from the lake into any of `tables`
    (`_lake_reloads`, written by warehouse/load.py in the file being built), or every row when
    one of them was read again whole. An incremental model deletes and recomputes exactly these:
    a day whose lake files did not change holds the same rows as at the last build. -#}
{% macro reloaded_days(tables, column='date') %}
    {%- set names = "'" ~ tables | join("', '") ~ "'" -%}
    (
        {{ column }} IN (SELECT date FROM _lake_reloads WHERE table_name IN ({{ names }}))
        OR EXISTS (SELECT 1 FROM _lake_reloads WHERE table_name IN ({{ names }}) AND date IS NULL)
    )
{%- endmacro %}
