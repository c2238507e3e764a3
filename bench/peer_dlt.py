"""The peer: the loader a data engineer would otherwise pick. dlt's rest_api source, a DuckDB
destination with Parquet loader files, over the same metrics endpoints, window and concurrency.

    python -m bench.peer_dlt BASE_URL KEY START END WORKDIR CONCURRENCY RESOURCE[:CAP] ...
"""

import os
import sys
from datetime import date, timedelta


def windows(start: date, end: date, days: int) -> list[tuple[date, date]]:
    out, first = [], start
    while first <= end:
        last = min(end, first + timedelta(days=days - 1))
        out.append((first, last))
        first = last + timedelta(days=1)
    return out


def main() -> None:
    base_url, key, start, end, workdir, concurrency, *resources = sys.argv[1:]
    os.environ["EXTRACT__WORKERS"] = concurrency
    os.environ["DATA_WRITER__DISABLE_COMPRESSION"] = "false"
    import dlt
    from dlt.sources.rest_api import rest_api_source

    specs = []
    for item in resources:
        resource, _, cap = item.partition(":")
        for index, (first, last) in enumerate(
            windows(date.fromisoformat(start), date.fromisoformat(end), int(cap or 31))
        ):
            specs.append(
                {
                    "name": f"{resource.replace('-', '_')}_{index:03d}",
                    "table_name": resource.replace("-", "_"),
                    "parallelized": True,
                    "endpoint": {
                        "path": f"/v1/{resource}",
                        "params": {
                            "start_date": first.isoformat(),
                            "end_date": last.isoformat(),
                            "granularity": "daily",
                            "include_total": "true",
                        },
                        "data_selector": "data",
                        "paginator": {
                            "type": "offset",
                            "limit": 1000,
                            "offset_param": "offset",
                            "limit_param": "limit",
                            "total_path": "total_count",
                        },
                    },
                }
            )
    source = rest_api_source(
        {
            "client": {"base_url": base_url, "auth": {"type": "bearer", "token": key}},
            "resource_defaults": {"write_disposition": "append"},
            "resources": specs,
        }
    )
    pipeline = dlt.pipeline(
        pipeline_name="bench_peer",
        pipelines_dir=os.path.join(workdir, "dlt"),
        destination=dlt.destinations.duckdb(os.path.join(workdir, "dlt_peer.duckdb")),
        dataset_name="metrics",
    )
    info = pipeline.run(source, loader_file_format="parquet")
    info.raise_on_failed_jobs()
    rows = sum(pipeline.last_trace.last_normalize_info.row_counts.values())
    print(rows)


if __name__ == "__main__":
    main()
