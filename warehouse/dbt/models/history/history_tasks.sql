-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'tasks',
    key=["id"],
    attributes=[
        "title",
        "description",
        "priority",
        "status",
        "expires_at",
        "item_count",
        "resolved_at",
        "created_at",
        "updated_at"
    ]
) }}
