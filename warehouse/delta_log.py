"""A Delta table's commits after a version, read from its log: what a warehouse build needs to
know of a table it loaded before, at the cost of what changed since.

Opening a table with delta-rs replays every commit since its last checkpoint and lists every
data file of the version (20-40 ms for a table of a daily run's medium lake, ~200 ms for one of
3,600 files), which grew with the lake and was most of a daily warehouse step. A build knows
the version it loaded last time and that version's files (`warehouse/load.py` records both).
The Delta protocol's JSON commits name each file added and removed, with its partition values,
so the version after them is those files updated by these commits: a few small files a day.

delta-rs has no public API for a range of commits short of its change data feed, which writes
change files on every overwrite; the JSON commit format is the protocol's own, stable across
writers (https://github.com/delta-io/delta/blob/master/PROTOCOL.md#delta-log-entries).
"""

from dataclasses import dataclass
from datetime import date

import orjson
import pyarrow.fs as pafs

LOG = "_delta_log"
JSON_COMMIT = ".json"
VERSION_DIGITS = 20


@dataclass(frozen=True)
class Commits:
    """A table's commits after `since`, up to `version`: each file added or removed, in order,
    with its day (partition `date`; None for a table without one)."""

    since: int
    version: int
    actions: tuple[tuple[bool, str, date | None], ...]  # (added, path, day)

    @property
    def removes(self) -> bool:
        """Whether a commit replaced or deleted files (which a vacuum may then remove)."""
        return any(not added for added, _, _ in self.actions)

    def applied(self, files: dict[str, date | None]) -> dict[str, date | None]:
        """The data files at `version`, from those at `since`."""
        current = dict(files)
        for added, path, day in self.actions:
            if added:
                current[path] = day
            else:
                current.pop(path, None)
        return current


def commits_since(storage: pafs.FileSystem, root: str, since: int) -> Commits | None:
    """The commits of the table at `root` after version `since`; None when one of them is no
    longer in the log (cleaned up after a checkpoint) or the log ends before `since` (the
    table was written anew): the caller then opens the table whole."""
    listed = storage.get_file_info(pafs.FileSelector(f"{root}/{LOG}", allow_not_found=True))
    versions = sorted(
        int(info.base_name.removesuffix(JSON_COMMIT))
        for info in listed
        if info.base_name.endswith(JSON_COMMIT) and info.base_name[:VERSION_DIGITS].isdigit()
    )
    newest = versions[-1] if versions else -1
    after = [version for version in versions if version > since]
    if newest < since or after != list(range(since + 1, newest + 1)):
        return None
    actions = []
    for version in after:
        with storage.open_input_stream(f"{root}/{LOG}/{version:0{VERSION_DIGITS}d}.json") as f:
            lines = f.read().splitlines()
        for line in lines:
            entry = orjson.loads(line)
            for kind in ("add", "remove"):
                if kind in entry:
                    action = entry[kind]
                    day = (action.get("partitionValues") or {}).get("date")
                    actions.append(
                        (kind == "add", action["path"], date.fromisoformat(day) if day else None)
                    )
    return Commits(since, newest, tuple(actions))
