-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'vendor_products',
    key=["id"],
    attributes=[
        "asin",
        "sku",
        "title",
        "active",
        "connection",
        "country",
        "brand",
        "vendor_central_info",
        "catalog_public_info",
        "aplus_content",
        "inventory",
        "sales_ranks",
        "customer_feedback",
        "created_at",
        "updated_at"
    ]
) }}
