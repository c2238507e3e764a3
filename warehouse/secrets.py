"""The key behind the change log's pseudonyms, kept under `$ADWH_HOME` and never elsewhere.

The same person maps to the same pseudonym across runs (so joins still work) for as long as the
user keeps this file; deleting it unlinks future pseudonyms from past ones.
"""

import contextlib
import os
import secrets
from pathlib import Path


def pseudonym_key(home: Path) -> bytes:
    path = home / "secrets" / "pseudonym.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.parent.chmod(0o700)
        tmp = path.with_suffix(f".{os.getpid()}-{secrets.token_hex(4)}.tmp")  # one per writer
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # first writer wins; a concurrent one reads the winner's key
        tmp.unlink()
    return path.read_bytes()
