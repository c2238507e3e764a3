-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'countries',
    key=["id"],
    attributes=[
        "code",
        "name",
        "marketplace_id"
    ]
) }}
