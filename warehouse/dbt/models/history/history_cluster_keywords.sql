-- Written by `python -m warehouse.history_models` from the registry: do not edit.
{{ entity_history(
    'cluster_keywords',
    key=["cluster", "polarity", "keyword"],
    attributes=[
        "language",
        "score",
        "purpose"
    ]
) }}
