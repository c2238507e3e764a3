-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'portfolios',
    key=["id"],
    attributes=[
        "name",
        "state",
        "budget_policy",
        "budget_amount",
        "budget_start_date",
        "budget_end_date",
        "created_at"
    ]
) }}
