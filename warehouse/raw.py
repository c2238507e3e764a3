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
            for old in folder.glob("page-*.json.gz"):
                old.unlink()
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, folder: Path, number: int, body: dict) -> Path:
        path = folder / f"page-{number:06d}.json.gz"
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(gzip.compress(orjson.dumps(body), compresslevel=1))
        tmp.replace(path)
        return path

    def read(self, folder: Path) -> Iterator[dict]:
        for path in sorted(folder.glob("page-*.json.gz")):
            yield orjson.loads(gzip.decompress(path.read_bytes()))
