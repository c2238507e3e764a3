"""What a page costs the client: CPU per page, 8 in flight, against the sandbox over HTTP.

    python -m bench.client_cpu [--pages 400] [--rounds 3] [--clients service,httpx,aiohttp]

`service` is the product's client (`pipelines.client.http.ServiceClient`, retries, limiter,
credits and all), `httpx` and `aiohttp` the two floors (bench/floor.py): the same requests,
each body parsed and dropped. Small pages are a first page of campaigns (20 rows, ~10 KB,
like most of an agency's pages), large ones a day of target metrics (560 rows, ~340 KB). The
clients alternate, round after round, so the machine's hour weighs on each alike; the sandbox
is its own process, so this process's CPU is the client's alone.
"""

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable

from pydantic import SecretStr

from bench.__main__ import KEY, serve
from bench.floor import fetch_all
from pipelines.client.http import ServiceClient

PAGES = {
    "small": ("/v1/campaigns", {"limit": 20}),
    "large": (
        "/v1/target-metrics",
        {"start_date": "2026-11-20", "end_date": "2026-11-20", "limit": 560, "offset": 0},
    ),
}
IN_FLIGHT = 8


async def with_service_client(url: str, path: str, params: dict, pages: int) -> None:
    async with ServiceClient(url, SecretStr(KEY), max_in_flight=IN_FLIGHT) as client:

        async def one() -> None:
            await client.get(path, params)  # parsed once, by the client, as in a run

        await asyncio.gather(*(one() for _ in range(pages)))


def fetcher(name: str) -> Callable[[str, str, dict, int], Awaitable[object]]:
    if name == "service":
        return with_service_client

    async def floor(url: str, path: str, params: dict, pages: int) -> None:
        await fetch_all([(path, params, "")] * pages, url, KEY, IN_FLIGHT, False, name)

    return floor


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.client_cpu")
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", default="service,httpx,aiohttp")
    args = parser.parse_args()
    clients = args.clients.split(",")
    server = serve("medium")
    spent: dict[tuple[str, str], list[float]] = {}
    try:
        for _ in range(args.rounds):
            for size, (path, params) in PAGES.items():
                for name in clients:
                    cpu = time.process_time()
                    asyncio.run(fetcher(name)(server.url, path, params, args.pages))
                    per_page = (time.process_time() - cpu) / args.pages * 1000
                    spent.setdefault((size, name), []).append(per_page)
    finally:
        server.stop()
    print(f"| page | {' | '.join(clients)} |")
    print(f"|---|{'---|' * len(clients)}")
    for size in PAGES:
        cells = [f"{min(spent[size, n]):.2f}-{max(spent[size, n]):.2f} ms" for n in clients]
        print(f"| {size} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
