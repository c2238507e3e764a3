"""Raw landing: every page exactly as the service sent it, compressed, before any parsing.

Nothing the service sent is lost even when a page fails its contract, and the typed layer can
be rebuilt from here without spending a credit. Path parts that come from the service (account
ids) are checked before they become folder names.
"""

import gzip
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import orjson

MANIFEST = "_manifest.json"
_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def safe_part(value: str) -> str:
    """A path component from outside data, refused unless plainly safe."""
    if not _SAFE.match(value):
        raise ValueError(f"refusing to use {value!r} in a file path")
    return value


class RawStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def window_dir(self, table: str, account: str, start: date, end: date) -> Path:
        return (
            self.root
            / table
            / f"account={safe_part(account)}"
            / f"window={start.isoformat()}_{end.isoformat()}"
        )

    def snapshot_dir(self, table: str, account: str, day: date) -> Path:
        return self.root / table / f"account={safe_part(account)}" / f"snapshot={day.isoformat()}"

    def start(self, folder: Path) -> None:
        """Begin landing a window afresh: pages of an earlier fetch of it are replaced."""
        if folder.exists():
            for old in [*folder.glob("page-*.json.gz"), *folder.glob(MANIFEST)]:
                old.unlink()
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, folder: Path, number: int, path: str, params: dict, body: dict) -> Path:
        """Land one page with the request that produced it (path and query, never headers)."""
        target = folder / f"page-{number:06d}.json.gz"
        tmp = target.with_suffix(".tmp")
        record = {"request": {"path": path, "params": params}, "response": body}
        tmp.write_bytes(gzip.compress(orjson.dumps(record), compresslevel=1))
        tmp.replace(target)
        return target

    def finish(self, folder: Path, manifest: dict) -> None:
        """Mark a fetch complete; a folder without a manifest is ignored by rebuilds."""
        tmp = folder / "_manifest.tmp"
        tmp.write_bytes(orjson.dumps(manifest))
        tmp.replace(folder / MANIFEST)

    def read(self, folder: Path) -> Iterator[tuple[str, dict, dict]]:
        """(path, params, body) of every landed page of a fetch, in order."""
        for page in sorted(folder.glob("page-*.json.gz")):
            record = orjson.loads(gzip.decompress(page.read_bytes()))
            yield record["request"]["path"], record["request"]["params"], record["response"]

    def fetches(self, table: str) -> Iterator[tuple[str, Path, dict]]:
        """Every complete fetch of a table: (account id, folder, manifest)."""
        for folder in sorted((self.root / table).glob("account=*/*")):
            manifest = folder / MANIFEST
            if manifest.exists():
                account = folder.parent.name.removeprefix("account=")
                yield account, folder, orjson.loads(manifest.read_bytes())
