-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'product_ads',
    key=["id"],
    attributes=[
        "ad_product",
        "ad_id",
        "connection",
        "country",
        "campaign",
        "ad_group",
        "product",
        "asin",
        "sku",
        "state",
        "ad_type",
        "delivery_status",
        "delivery_reasons",
        "created_at",
        "updated_at"
    ]
) }}
