-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'brands',
    key=["id"],
    attributes=[
        "name"
    ]
) }}
