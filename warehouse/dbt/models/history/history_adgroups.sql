-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'adgroups',
    key=["id"],
    attributes=[
        "ad_group_id",
        "name",
        "campaign",
        "ad_product",
        "connection",
        "country",
        "state",
        "default_bid",
        "created_at",
        "updated_at"
    ],
    change_log=true
) }}
