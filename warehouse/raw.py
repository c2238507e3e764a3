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

    def fetches(self, table: str) -> Iterator[tuple[str, Path, dict]]:
        """Every complete fetch of a table: (account id, folder, manifest)."""
        for folder in sorted((self.root / table).glob("account=*/*")):
            manifest = folder / MANIFEST
            if manifest.exists():
                account = folder.parent.name.removeprefix("account=")
                yield account, folder, orjson.loads(manifest.read_bytes())


def _prefix(path: str, params: dict) -> bytes:
    return b'{"request":' + orjson.dumps({"path": path, "params": params}) + b',"response":'


def _record(path: str, params: dict, content: bytes) -> bytes:
    """`{"request": {path, params}, "response": <body>}`, the body spliced in byte for byte:
    the same bytes `orjson.dumps` wrote for pages landed by earlier versions."""
    return _prefix(path, params) + (content or b"{}") + b"}"
