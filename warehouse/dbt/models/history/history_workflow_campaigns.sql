-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'workflow_campaigns',
    key=["workflow", "campaign"],
    attributes=[
        "name",
        "ad_product",
        "state",
        "gate",
        "optimization_config"
    ],
    stamped_keys={"optimization_config": ["optimizeDate"]}
) }}
