"""The warehouse's figures against the service's own, group by group.

Both sides are sums per group (account, day, currency and, in advertising, ad product): the
lake's rows summed, and the service's answer with `group_by=account`. A figure differs when
both sides report it and the values are not equal (exactly: money is DECIMAL on both sides),
or when one side holds a group the other lacks. A figure one side leaves unreported (NULL)
and the other reports is not compared: a grouped sum over rows some of which are not reported
is a choice the spec leaves open.
"""

import polars as pl

LAKE, SERVICE = "lake", "service"
ABSENT = "no rows"


def reported_sums(rows: pl.LazyFrame, keys: list[str], measures: list[str]) -> pl.LazyFrame:
    """Each group's sum of every measure; NULL where no row of the group reported it (a
    plain sum would say 0, and 0 is a real zero)."""
    return rows.group_by(keys).agg(
        pl.when(pl.col(m).count() > 0).then(pl.col(m).sum()).alias(m) for m in measures
    )


def differences(
    lake: pl.DataFrame, service: pl.DataFrame, keys: list[str], measures: list[str]
) -> pl.DataFrame:
    """One row per figure that differs: the group's keys, `measure`, and both figures as text
    (`no rows` for a group one side lacks)."""
    held = lake.select(*keys, *measures).with_columns(pl.lit(True).alias("_lake"))
    told = service.select(*keys, *measures).with_columns(pl.lit(True).alias("_service"))
    joined = held.join(told, on=keys, how="full", coalesce=True, suffix="_service")
    found = []
    for measure in measures:
        ours, theirs = pl.col(measure), pl.col(f"{measure}_service")
        lake_only = pl.col("_service").is_null() & ours.is_not_null()
        service_only = pl.col("_lake").is_null() & theirs.is_not_null()
        both_differ = ours.is_not_null() & theirs.is_not_null() & (ours != theirs)
        found.append(
            joined.filter(lake_only | service_only | both_differ).select(
                *keys,
                pl.lit(measure).alias("measure"),
                _figure(ours, "_lake").alias(LAKE),
                _figure(theirs, "_service").alias(SERVICE),
            )
        )
    schema = {**held.select(keys).schema, "measure": pl.String, LAKE: pl.String, SERVICE: pl.String}
    return pl.concat([pl.DataFrame(schema=schema), *found]).sort([*keys, "measure"])


def _figure(value: pl.Expr, side: str) -> pl.Expr:
    return pl.when(pl.col(side).is_null()).then(pl.lit(ABSENT)).otherwise(value.cast(pl.String))
