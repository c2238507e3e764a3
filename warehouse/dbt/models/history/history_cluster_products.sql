-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'cluster_products',
    key=["cluster", "product"],
    attributes=[
    ]
) }}
