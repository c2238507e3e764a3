-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'search_terms',
    key=["id"],
    attributes=[
        "search_term",
        "ad_product",
        "campaign",
        "ad_group",
        "target",
        "connection",
        "country",
        "target_type",
        "match_type",
        "created_at"
    ]
) }}
