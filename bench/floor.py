"""The fetch floor: exactly the pages a pipeline run fetched, fetched again with the same
concurrency and nothing else — each body parsed and dropped: no typing, no writing. Read from
the run's raw/ landing, which records the path and query of every page.

    python -m bench.floor RAW_DIR BASE_URL KEY CONCURRENCY [SINCE]

SINCE (seconds since the epoch): only the pages landed from then on, one run's of several.
"""

import asyncio
import gzip
import sys
from pathlib import Path

import httpx
import orjson


def requests_of(raw: Path, since: float = 0.0) -> list[tuple[str, dict, str | None]]:
    out = []
    for page in sorted(raw.rglob("page-*.json.gz")):
        if page.stat().st_mtime < since:
            continue
        record = orjson.loads(gzip.decompress(page.read_bytes()))
        account = page.parent.parent.name.removeprefix("account=")
        out.append((record["request"]["path"], record["request"]["params"], account))
    return out


async def fetch_all(requests, base_url: str, key: str, concurrency: int, agency: bool) -> int:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    fetched = 0
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=120) as client:

        async def one(path: str, params: dict, account: str) -> None:
            nonlocal fetched
            headers = {"Authorization": f"Bearer {key}"}
            if agency:
                headers["Service-Account"] = account
            async with gate:
                answer = await client.get(path, params=params, headers=headers)
                orjson.loads(await answer.aread())  # parsed, then dropped
                fetched += 1

        await asyncio.gather(*(one(*r) for r in requests))
    return fetched


def main() -> None:
    raw, base_url, key, concurrency = sys.argv[1:5]
    requests = requests_of(Path(raw), float(sys.argv[5]) if len(sys.argv) > 5 else 0.0)
    count = asyncio.run(fetch_all(requests, base_url, key, int(concurrency), agency=False))
    print(count)


if __name__ == "__main__":
    main()
