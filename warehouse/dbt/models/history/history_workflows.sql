-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'workflows',
    key=["id"],
    attributes=[
        "name",
        "name_key",
        "description_key",
        "template",
        "active",
        "selection",
        "schedule",
        "variables",
        "nodes",
        "created_at",
        "updated_at"
    ]
) }}
