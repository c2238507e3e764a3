-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'products',
    key=["id"],
    attributes=[
        "asin",
        "sku",
        "title",
        "ean",
        "upc",
        "gtin",
        "platform",
        "type",
        "active",
        "connection",
        "country",
        "brand",
        "created_at",
        "updated_at"
    ]
) }}
