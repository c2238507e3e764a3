"""The peer as a Dagster user runs it: dlt through dagster-dlt, an asset per metrics table with
daily partitions, the range loaded in one run (dagster-dlt's single-run backfill policy) into
DuckDB, on a fresh Dagster home with its default (SQLite) storage: what `adwh run` is measured
against on one account (bench/SCALE.md, "One account").

    python -m bench.peer_dagster_dlt BASE_URL KEY START END WORKDIR CONCURRENCY RESOURCE:CAP ...

The definitions are this module's; the run is `dagster asset materialize --partition-range`,
in its own process, as a user would start it. Each table's resource walks the run's range in
windows of the table's cap, each window's pages by offset (dlt's REST client), the tables in
parallel on dlt's extract workers.
"""

import os
import sys
from datetime import date, timedelta
from pathlib import Path

import dagster as dg
import dlt
from dagster_dlt import DagsterDltResource, dlt_assets
from dlt.sources.helpers.rest_client import RESTClient
from dlt.sources.helpers.rest_client.auth import BearerTokenAuth
from dlt.sources.helpers.rest_client.paginators import OffsetPaginator

from bench.peer_dlt import windows

# The run's settings reach the definitions (loaded again by the run's process) as variables.
SETTINGS = "BENCH_PEER_SETTINGS"


def metrics_source(base_url: str, key: str, start: date, end: date, resources: list[str]):
    """A dlt source: a resource per metrics endpoint over [start, end], named for its table."""
    client = RESTClient(base_url=base_url, auth=BearerTokenAuth(key))

    def table(resource: str, cap: int):
        @dlt.resource(
            name=resource.replace("-", "_"), write_disposition="append", parallelized=True
        )
        def pages():
            for first, last in windows(start, end, cap):
                yield from client.paginate(
                    f"/v1/{resource}",
                    params={
                        "start_date": first.isoformat(),
                        "end_date": last.isoformat(),
                        "granularity": "daily",
                        "include_total": "true",
                    },
                    paginator=OffsetPaginator(limit=1000, total_path="total_count"),
                    data_selector="data",
                )

        return pages

    @dlt.source(name="metrics")
    def source():
        for item in resources:
            resource, _, cap = item.partition(":")
            yield table(resource, int(cap or 31))

    return source()


def _settings() -> tuple[str, str, date, date, str, list[str]]:
    base_url, key, start, end, workdir, *resources = os.environ[SETTINGS].split("\n")
    return base_url, key, date.fromisoformat(start), date.fromisoformat(end), workdir, resources


def definitions() -> dg.Definitions:
    base_url, key, start, end, workdir, resources = _settings()
    daily = dg.DailyPartitionsDefinition(
        start_date=start.isoformat(), end_date=(end + timedelta(days=1)).isoformat()
    )
    pipeline = dlt.pipeline(
        pipeline_name="bench_dagster_peer",
        pipelines_dir=os.path.join(workdir, "dlt"),
        destination=dlt.destinations.duckdb(os.path.join(workdir, "dlt_peer.duckdb")),
        dataset_name="metrics",
    )

    @dlt_assets(
        dlt_source=metrics_source(base_url, key, start, end, resources),
        dlt_pipeline=pipeline,
        name="metrics",
        partitions_def=daily,
    )
    def metrics(context: dg.AssetExecutionContext, dlt: DagsterDltResource):
        window = context.partition_time_window
        first, last = window.start.date(), window.end.date() - timedelta(days=1)
        yield from dlt.run(
            context=context,
            dlt_source=metrics_source(base_url, key, first, last, resources),
            loader_file_format="parquet",
        )

    return dg.Definitions(assets=[metrics], resources={"dlt": DagsterDltResource()})


if SETTINGS in os.environ:
    defs = definitions()


def main() -> None:
    base_url, key, start, end, workdir, concurrency, *resources = sys.argv[1:]
    home = Path(workdir) / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        SETTINGS: "\n".join([base_url, key, start, end, workdir, *resources]),
        "DAGSTER_HOME": str(home),
        "EXTRACT__WORKERS": concurrency,
        "DATA_WRITER__DISABLE_COMPRESSION": "false",
    }
    os.execve(  # this process becomes the run: its wall, CPU and memory are the measure's
        sys.executable,
        [
            sys.executable, "-m", "dagster", "asset", "materialize",
            "-m", "bench.peer_dagster_dlt", "--select", "*",
            "--partition-range", f"{start}...{end}",
        ],
        env,
    )  # fmt: skip


if __name__ == "__main__":
    main()
