"""Raw landing: every page exactly as the service sent it, compressed, before any parsing.

Nothing the service sent is lost even when a page fails its contract, and the typed layer can
be rebuilt from here without spending a credit. Path parts that come from the service (account
ids) are checked before they become folder names. The folder names (`window=first_last~when`,
`snapshot=day`) are written and read here only, and so is the choice of which fetch a rebuild
re-reads: for each account and day, the newest complete one. Every fetch of a dated window keeps
a folder of its own (`~when`, the time it was fetched), so a window fetched again (a re-run, a
second daily run the same day) keeps what the service said the first time too: the record a
rebuild replays the restatements from. Folders of earlier versions have no `~when`.

The store is a local folder or `s3://bucket/prefix` (`ADWH_RAW_URL`), through PyArrow's file
systems (credentials from the standard AWS environment variables). Each page appears whole or
not at all: an object store's PUT is atomic, and on a local disk a page is written beside its
name and renamed over it.
"""

import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath

import orjson
import polars as pl
import pyarrow.fs as pafs

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
    folder: PurePosixPath
    manifest: dict
    days: tuple[date, ...] = ()


def window_of(folder: PurePosixPath) -> tuple[date, date]:
    """The first and last day a fetch's folder covers (a snapshot covers its one day)."""
    first, _, last = folder.name.split("=", 1)[1].partition("~")[0].partition("_")
    return date.fromisoformat(first), date.fromisoformat(last or first)


class RawStore:
    def __init__(self, url: str | Path) -> None:
        if "://" in str(url):
            self.fs, root = pafs.FileSystem.from_uri(str(url))
        else:
            self.fs, root = pafs.LocalFileSystem(), str(Path(url).absolute())
        self.root = PurePosixPath(root)
        self.local = isinstance(self.fs, pafs.LocalFileSystem)

    def fetch_dir(
        self,
        table: str,
        account: str,
        first: date,
        last: date,
        dated: bool,
        fetched: datetime | None = None,
    ) -> PurePosixPath:
        """A dated fetch's folder names its window and when it was `fetched`; a snapshot's,
        the day it was taken (a later snapshot of the day replaces it)."""
        name = f"window={first.isoformat()}_{last.isoformat()}" if dated else f"snapshot={first}"
        if dated and fetched is not None:
            name += f"~{fetched.astimezone(UTC):%Y%m%dT%H%M%S%fZ}"
        return self.root / table / f"account={safe_part(account)}" / name

    def start(self, folder: PurePosixPath) -> None:
        """Begin landing a window afresh: pages of an earlier fetch of it are replaced."""
        for old in self._files(folder, recursive=False):
            if old.name.startswith("page-") or old.name == MANIFEST:
                self.fs.delete_file(str(old))
        if self.local:
            self.fs.create_dir(str(folder), recursive=True)

    def write(
        self, folder: PurePosixPath, number: int, path: str, params: dict, content: bytes
    ) -> PurePosixPath:
        """Land one page with the request that produced it (path and query, never headers):
        the body's bytes as received (after pseudonymization), so a rebuild reads the same
        digits the service sent."""
        target = folder / f"page-{number:06d}.json.gz"
        self._put(target, gzip.compress(_record(path, params, content), compresslevel=1))
        return target

    def finish(self, folder: PurePosixPath, manifest: dict) -> None:
        """Mark a fetch complete; a folder without a manifest is ignored by rebuilds."""
        self._put(folder / MANIFEST, orjson.dumps(manifest))

    def read(self, folder: PurePosixPath) -> Iterator[tuple[PurePosixPath, str, dict, bytes]]:
        """(file, path, params, body bytes) of every landed page of a fetch, in order."""
        pages = sorted(f for f in self._files(folder, False) if f.name.startswith("page-"))
        for page in pages:
            record = gzip.decompress(self._get(page))
            request = orjson.loads(record)["request"]
            content = record[len(_prefix(request["path"], request["params"])) : -1]
            yield page, request["path"], request["params"], content

    def rewrite(self, page: PurePosixPath, path: str, params: dict, content: bytes) -> None:
        """Replace a landed page in place (pages landed before e-mails were pseudonymized)."""
        self._put(page, gzip.compress(_record(path, params, content), compresslevel=1))

    def fetches(self, table: str) -> list[Fetch]:
        """Every complete fetch of a table, oldest first."""
        found = []
        for manifest in self._files(self.root / table, recursive=True):
            folder = manifest.parent
            if manifest.name == MANIFEST and folder.parent.name.startswith("account="):
                account = folder.parent.name.removeprefix("account=")
                found.append(Fetch(account, folder, orjson.loads(self._get(manifest))))
        return sorted(found, key=lambda fetch: fetch.manifest["extracted_at"])

    def _files(self, folder: PurePosixPath, recursive: bool) -> list[PurePosixPath]:
        selector = pafs.FileSelector(str(folder), allow_not_found=True, recursive=recursive)
        return [
            PurePosixPath(info.path)
            for info in self.fs.get_file_info(selector)
            if info.type == pafs.FileType.File
        ]

    def _get(self, file: PurePosixPath) -> bytes:
        with self.fs.open_input_stream(str(file), compression=None) as stream:
            return stream.readall()

    def _put(self, file: PurePosixPath, data: bytes) -> None:
        """Write `file` whole or not at all."""
        target = str(file)
        if not self.local:
            with self.fs.open_output_stream(target, compression=None) as stream:
                stream.write(data)
            return
        partial = f"{target}.tmp"
        with self.fs.open_output_stream(partial, compression=None) as stream:
            stream.write(data)
        self.fs.move(partial, target)

    def newest_by_day(self, table: str, first: date, last: date) -> list[Fetch]:
        """The fetches a rebuild of [first, last] re-reads, each with the days it is the newest
        for (per account); days no fetch covers are in none."""
        newest: dict[tuple[str, date], Fetch] = {}
        for fetch in self.every_fetch(table, first, last):  # oldest first: the newest stays
            for day in fetch.days:
                newest[(fetch.account, day)] = fetch
        taken: dict[PurePosixPath, tuple[Fetch, list[date]]] = {}
        for (_, day), fetch in newest.items():
            taken.setdefault(fetch.folder, (fetch, []))[1].append(day)
        return [
            Fetch(fetch.account, fetch.folder, fetch.manifest, tuple(sorted(days)))
            for fetch, days in taken.values()
        ]

    def every_fetch(self, table: str, first: date, last: date) -> list[Fetch]:
        """Every complete fetch of a dated table covering days of [first, last], oldest first,
        each with those days: what the service said of each day, fetch after fetch."""
        found = []
        for fetch in self.fetches(table):
            lo, hi = window_of(fetch.folder)
            if max(lo, first) <= min(hi, last):
                days = pl.date_range(max(lo, first), min(hi, last), eager=True).to_list()
                found.append(Fetch(fetch.account, fetch.folder, fetch.manifest, tuple(days)))
        return found

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
