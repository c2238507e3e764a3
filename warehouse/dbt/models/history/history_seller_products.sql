-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'seller_products',
    key=["id"],
    attributes=[
        "asin",
        "sku",
        "title",
        "active",
        "connection",
        "country",
        "brand",
        "seller_central_info",
        "catalog_public_info",
        "pricing",
        "buybox_b2c",
        "buybox_b2b",
        "fba_inventory",
        "aplus_content",
        "competitive_price_summary",
        "fba_local_stock",
        "sales_ranks",
        "suppressed",
        "amazon_status",
        "public_parent_sku",
        "public_parent_asin",
        "public_is_parent_asin",
        "backend_parent_sku",
        "backend_parent_asin",
        "backend_is_parent_asin",
        "created_at",
        "updated_at"
    ]
) }}
