-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'connections',
    key=["id"],
    attributes=[
        "type",
        "name",
        "active",
        "countries",
        "created_at"
    ]
) }}
