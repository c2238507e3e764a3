"""Deterministic, vectorised pseudo-randomness.

Every value the sandbox serves is a pure function of (seed, entity, day, salt), so any page of
any window can be produced on demand without generating or storing the history before it.
"""

import hashlib
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Draws:
    """One account's ids and draws: pure functions of (seed, account, kind, …), whatever else
    the account holds. Builders take this, never the account."""

    seed: int
    index: int

    def id_of(self, kind: str, i: int) -> str:
        """The id of the i-th entity of a kind: records and columnar tables agree on it."""
        return make_id(self.seed, self.index, kind, int(i))

    def unit(self, *parts: object) -> float:
        """A stable float in [0, 1) of the account and the parts."""
        return unit(self.seed, self.index, *parts)

    def columns(self, kind: str, count: int, size: int) -> list[np.ndarray]:
        """`count` independent uniform columns over `size` entities of a kind.

        Drawing a column at a time keeps the `large` preset's tens of thousands of records fast
        to build; each value still depends only on (seed, account, kind, column, entity).
        """
        entities = np.arange(size)
        return [
            uniform(self.seed, scalar(self.index, kind, k) % 2**31, entities, self.index)
            for k in range(count)
        ]

    def bits(self, kind: str, size: int) -> np.ndarray:
        """One 64-bit hash per entity of a kind, for picking words and codes."""
        return hash_grid(self.seed, scalar(self.index, kind) % 2**31, np.arange(size), self.index)
