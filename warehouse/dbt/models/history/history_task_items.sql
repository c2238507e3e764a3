-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'task_items',
    key=["id"],
    attributes=[
        "task",
        "entity_type",
        "entity",
        "display_name",
        "display_id",
        "problem_label",
        "field_path",
        "current_value",
        "suggested_value",
        "applied_value",
        "status",
        "applied_at",
        "apply_error",
        "created_at",
        "updated_at"
    ]
) }}
