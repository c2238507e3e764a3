"""The fetch floor: exactly the pages a pipeline run fetched, fetched again with the same
concurrency and nothing else — each body parsed and dropped: no typing, no writing. Read from
the run's raw/ landing, which records the path and query of every page.

    python -m bench.floor RAW_DIR BASE_URL KEY CONCURRENCY [SINCE] [--client httpx]

SINCE (seconds since the epoch): only the pages landed from then on, one run's of several.
The floor fetches with aiohttp, the fastest client measured here (bench/SPEED.md, "Issue
59"); `--client httpx` is the floor before issue 59, kept to show the change of yardstick.
"""

import argparse
import asyncio
import gzip
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
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


async def fetch_all(
    requests, base_url: str, key: str, concurrency: int, agency: bool, client: str = "aiohttp"
) -> int:
    """Fetch every request, `concurrency` in flight, each body parsed and dropped."""
    gate = asyncio.Semaphore(concurrency)
    fetched = 0
    async with _getter(client, base_url, concurrency) as get:

        async def one(path: str, params: dict, account: str) -> None:
            nonlocal fetched
            headers = {"Authorization": f"Bearer {key}"}
            if agency:
                headers["Service-Account"] = account
            async with gate:
                orjson.loads(await get(path, {k: str(v) for k, v in params.items()}, headers))
                fetched += 1

        await asyncio.gather(*(one(*r) for r in requests))
    return fetched


@asynccontextmanager
async def _getter(client: str, base_url: str, concurrency: int):
    """`get(path, params, headers) -> body`, over a pool of `concurrency` connections."""
    if client == "httpx":
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=120) as session:

            async def get(path: str, params: dict, headers: dict) -> bytes:
                return (await session.get(path, params=params, headers=headers)).content

            yield get
        return
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def get(path: str, params: dict, headers: dict) -> bytes:
            async with session.get(base_url + path, params=params, headers=headers) as answer:
                return await answer.read()

        yield get


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floor")
    parser.add_argument("raw", type=Path)
    parser.add_argument("base_url")
    parser.add_argument("key")
    parser.add_argument("concurrency", type=int)
    parser.add_argument("since", type=float, nargs="?", default=0.0)
    parser.add_argument("--client", choices=("aiohttp", "httpx"), default="aiohttp")
    args = parser.parse_args()
    requests = requests_of(args.raw, args.since)
    count = asyncio.run(
        fetch_all(requests, args.base_url, args.key, args.concurrency, False, args.client)
    )
    print(count)


if __name__ == "__main__":
    main()
