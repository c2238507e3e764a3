-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'advertising_products',
    key=["id"],
    attributes=[
        "asin",
        "sku",
        "title",
        "active",
        "connection",
        "country",
        "brand",
        "availability",
        "eligibility_status",
        "ineligibility_codes",
        "ineligibility_reasons",
        "basis_price_amount",
        "basis_price_currency",
        "best_seller_rank",
        "first_availability_date",
        "category_name",
        "brand_name",
        "variation_list",
        "created_at",
        "updated_at"
    ]
) }}
