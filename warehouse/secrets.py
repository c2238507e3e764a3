"""The key behind the change log's pseudonyms: from a secret when the deployment gives one
(`ADWH_PSEUDONYM_KEY`, `ADWH_PSEUDONYM_KEY_FILE`), else a file under `$ADWH_HOME/secrets` made on
first use. It never goes anywhere else.

The same person maps to the same pseudonym across runs (so joins still work) for as long as the
key stays the same. So the key the data was written with is remembered by its fingerprint (an
HMAC of a constant: it tells keys apart and reveals none), and a run with another key is
refused unless it is told to rotate: another key silently gives everyone new pseudonyms.
"""

import contextlib
import hashlib
import hmac
import os
import secrets
from pathlib import Path

KEY_FILE = "pseudonym.key"
FINGERPRINT_FILE = "pseudonym.key.fingerprint"


class PseudonymKeyError(ValueError):
    """The key in use is not the one the data under `$ADWH_HOME` was written with."""


def pseudonym_key(home: Path, given: bytes | None = None, rotate: bool = False) -> bytes:
    """`given` (a secret's) or the key kept under `home`; raises PseudonymKeyError when it is
    not the key the data was written with, unless `rotate`, which makes it that key."""
    folder = home / "secrets"
    key = given if given is not None else _kept_key(folder)
    held = _held_fingerprint(folder)
    fingerprint = _fingerprint(key)
    if held is not None and held != fingerprint and not rotate:
        raise PseudonymKeyError(
            f"the pseudonym key in use differs from the one the data in {home} was written with "
            "(the same person would get another pseudonym): give that key again, or set "
            "ADWH_ROTATE_PSEUDONYM_KEY=1 for one run to rotate (deploy/README.md says what "
            "rotating does)"
        )
    kept = folder / FINGERPRINT_FILE
    if held != fingerprint or not kept.exists():  # kept even when the key file is the source
        _write(kept, fingerprint.encode())
    return key


def _fingerprint(key: bytes) -> str:
    return hmac.new(key, b"ads-warehouse pseudonym key", hashlib.sha256).hexdigest()


def _held_fingerprint(folder: Path) -> str | None:
    """The fingerprint of the key the data was written with: kept beside it, or (a home from
    before fingerprints) that of the key file there."""
    fingerprint = folder / FINGERPRINT_FILE
    if fingerprint.exists():
        return fingerprint.read_text().strip()
    if (folder / KEY_FILE).exists():
        return _fingerprint((folder / KEY_FILE).read_bytes())
    return None


def _kept_key(folder: Path) -> bytes:
    path = folder / KEY_FILE
    if not path.exists():
        with contextlib.suppress(FileExistsError):  # a concurrent writer's key wins
            _write(path, secrets.token_bytes(32), replace=False)
    return path.read_bytes()


def _write(path: Path, content: bytes, replace: bool = True) -> None:
    """`content` in `path`, readable by this user only, whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    tmp = path.with_suffix(f".{os.getpid()}-{secrets.token_hex(4)}.tmp")  # one per writer
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)
    try:
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if the file exists: the first writer's stays
    finally:
        tmp.unlink(missing_ok=True)
