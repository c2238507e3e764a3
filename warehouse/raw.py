"""Raw landing: every page exactly as the service sent it, compressed, before any parsing.

Nothing the service sent is lost even when a page fails its contract, and the typed layer can
be rebuilt from here without spending a credit. Path parts that come from the service (account
ids) are checked before they become folder names. The folder names (`window=first_last`,
`snapshot=day`) are written and read here only, and so is the choice of which fetch a rebuild
re-reads: for each account and day, the newest complete one.
"""

import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import orjson
import polars as pl

MANIFEST = "_manifest.json"
_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def safe_part(value: str) -> str:
    """A path component from outside data, refused unless plainly safe."""
    if not _SAFE.match(value):
        raise ValueError(f"refusing to use {value!r} in a file path")
    return value


@dataclass(frozen=True)
class Fetch:
    """One complete fetch landed for an account; `days`: those a rebuild takes from it."""

    account: str
    folder: Path
    manifest: dict
    days: tuple[date, ...] = ()


def window_of(folder: Path) -> tuple[date, date]:
    """The first and last day a fetch's folder covers (a snapshot covers its one day)."""
    first, _, last = folder.name.split("=", 1)[1].partition("_")
    return date.fromisoformat(first), date.fromisoformat(last or first)


class RawStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def fetch_dir(self, table: str, account: str, first: date, last: date, dated: bool) -> Path:
        """A dated fetch's folder names its window; a snapshot's, the day it was taken."""
        name = f"window={first.isoformat()}_{last.isoformat()}" if dated else f"snapshot={first}"
        return self.root / table / f"account={safe_part(account)}" / name

    def start(self, folder: Path) -> None:
        """Begin landing a window afresh: pages of an earlier fetch of it are replaced."""
        if folder.exists():
            for old in [*folder.glob("page-*.json.gz"), *folder.glob(MANIFEST)]:
                old.unlink()
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, folder: Path, number: int, path: str, params: dict, content: bytes) -> Path:
        """Land one page with the request that produced it (path and query, never headers):
        the body's bytes as received (after pseudonymization), so a rebuild reads the same
        digits the service sent."""
        target = folder / f"page-{number:06d}.json.gz"
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(gzip.compress(_record(path, params, content), compresslevel=1))
        tmp.replace(target)
        return target

    def finish(self, folder: Path, manifest: dict) -> None:
        """Mark a fetch complete; a folder without a manifest is ignored by rebuilds."""
        tmp = folder / "_manifest.tmp"
        tmp.write_bytes(orjson.dumps(manifest))
        tmp.replace(folder / MANIFEST)

    def read(self, folder: Path) -> Iterator[tuple[Path, str, dict, bytes]]:
        """(file, path, params, body bytes) of every landed page of a fetch, in order."""
        for page in sorted(folder.glob("page-*.json.gz")):
            record = gzip.decompress(page.read_bytes())
            request = orjson.loads(record)["request"]
            content = record[len(_prefix(request["path"], request["params"])) : -1]
            yield page, request["path"], request["params"], content

    def rewrite(self, page: Path, path: str, params: dict, content: bytes) -> None:
        """Replace a landed page in place (pages landed before e-mails were pseudonymized)."""
        tmp = page.with_suffix(".tmp")
        tmp.write_bytes(gzip.compress(_record(path, params, content), compresslevel=1))
        tmp.replace(page)

    def fetches(self, table: str) -> list[Fetch]:
        """Every complete fetch of a table, oldest first."""
        found = []
        for folder in sorted((self.root / table).glob("account=*/*")):
            manifest = folder / MANIFEST
            if manifest.exists():
                account = folder.parent.name.removeprefix("account=")
                found.append(Fetch(account, folder, orjson.loads(manifest.read_bytes())))
        return sorted(found, key=lambda fetch: fetch.manifest["extracted_at"])

    def newest_by_day(self, table: str, first: date, last: date) -> list[Fetch]:
        """The fetches a rebuild of [first, last] re-reads, each with the days it is the newest
        for (per account); days no fetch covers are in none."""
        newest: dict[tuple[str, date], Fetch] = {}
        for fetch in self.fetches(table):
            lo, hi = window_of(fetch.folder)
            if max(lo, first) <= min(hi, last):
                for day in pl.date_range(max(lo, first), min(hi, last), eager=True):
                    newest[(fetch.account, day)] = fetch
        taken: dict[Path, tuple[Fetch, list[date]]] = {}
        for (_, day), fetch in newest.items():
            taken.setdefault(fetch.folder, (fetch, []))[1].append(day)
        return [
            Fetch(fetch.account, fetch.folder, fetch.manifest, tuple(sorted(days)))
            for fetch, days in taken.values()
        ]

    def newest_snapshots(self, table: str, end: date) -> list[Fetch]:
        """Current state as of `end`: each account's newest snapshot taken by then. A run takes
        it on its reference date, usually after the dates it extracted."""
        newest: dict[str, Fetch] = {}
        for fetch in self.fetches(table):
            day = window_of(fetch.folder)[0]
            current = newest.get(fetch.account)
            if day <= end and (current is None or day >= window_of(current.folder)[0]):
                newest[fetch.account] = fetch
        return [
            Fetch(f.account, f.folder, f.manifest, window_of(f.folder)[:1]) for f in newest.values()
        ]


def _prefix(path: str, params: dict) -> bytes:
    return b'{"request":' + orjson.dumps({"path": path, "params": params}) + b',"response":'


def _record(path: str, params: dict, content: bytes) -> bytes:
    """`{"request": {path, params}, "response": <body>}`, the body spliced in byte for byte:
    the same bytes `orjson.dumps` wrote for pages landed by earlier versions."""
    return _prefix(path, params) + (content or b"{}") + b"}"
