-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'clusters',
    key=["id"],
    attributes=[
        "name",
        "created_at",
        "updated_at"
    ]
) }}
