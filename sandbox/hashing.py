"""Deterministic, vectorised pseudo-randomness.

Every value the sandbox serves is a pure function of (seed, entity, day, salt), so any page of
any window can be produced on demand without generating or storing the history before it.
"""

import hashlib

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a cheap, well-distributed 64-bit permutation."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def hash_grid(seed: int, salt: int, entities: np.ndarray, day: int) -> np.ndarray:
    """One uint64 per entity for a given day and salt."""
    with np.errstate(over="ignore"):
        base = np.uint64((seed * 1_000_003 + salt * 7_919 + day * 104_729) & 0xFFFFFFFFFFFFFFFF)
        return _mix(entities.astype(np.uint64) * _GOLDEN + base)


def uniform(seed: int, salt: int, entities: np.ndarray, day: int) -> np.ndarray:
    """Uniform floats in [0, 1) for each entity on a day."""
    return (hash_grid(seed, salt, entities, day) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def scalar(*parts: object) -> int:
    """A stable 64-bit integer for a tuple of parts (entity attributes, not hot paths)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def unit(*parts: object) -> float:
    """A stable float in [0, 1) for a tuple of parts."""
    return (scalar(*parts) >> 11) * 2.0**-53


def make_id(*parts: object) -> str:
    """A 24-character lowercase hexadecimal identifier, as the spec's ids are."""
    return hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=12).hexdigest()
