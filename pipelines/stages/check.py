"""Checking: which partitions of a typed window keep their table's contract.

The window is checked whole (one Pandera call); only when it fails is it checked day by day,
so just the broken days are held back and named.
"""

from datetime import date

import polars as pl

from pipelines.stages.outcome import TableOutcome
from warehouse.contracts import ContractError, validate
from warehouse.schemas import TableSchema


def keeping_contract(
    schema: TableSchema, frame: pl.DataFrame, days: list[date], outcome: TableOutcome
) -> tuple[pl.DataFrame, list[date]]:
    """The rows and days of a dated window that keep the contract."""
    try:
        validate(schema, frame, f"{days[0]}..{days[-1]}")
        return frame, days
    except ContractError:
        pass
    by_day = {key[0]: part for key, part in frame.partition_by("date", as_dict=True).items()}
    good_days, good_frames = [], []
    for day in days:
        part = by_day.get(day, schema.concat([]))
        try:
            validate(schema, part, day.isoformat())
        except ContractError as error:
            # Held like a bad value's day: not recorded as held, so the next daily run asks
            # for it again (`pipelines/catch_up.py`).
            outcome.held_back.append(str(error))
            outcome.held_days.add(day)
            continue
        good_days.append(day)
        good_frames.append(part)
    return schema.concat(good_frames), good_days


def snapshot_keeps_contract(
    schema: TableSchema, frame: pl.DataFrame, day: date, outcome: TableOutcome
) -> bool:
    """A snapshot is published whole or not at all."""
    try:
        validate(schema, frame, f"snapshot {day}")
    except ContractError as error:
        outcome.held_back.append(str(error))
        return False
    return True
