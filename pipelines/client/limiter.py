"""A concurrency limit that halves on 429s and creeps back up on success (AIMD).

A fixed semaphore would keep hammering a rate-limited key at full width; backing off the width
lets the retries' sleeps and the service's quota line up, and the run speeds up again as soon
as the service stops complaining.

Hundreds of requests may queue at once (a day of optimization history asks every campaign
together), so waiters queue first-come first-served and each released slot wakes exactly one
of them: waking them all to re-check the limit would cost quadratic time per day.
"""

import asyncio
from collections import deque


class AdaptiveLimiter:
    def __init__(self, maximum: int, recover_after: int = 20) -> None:
        self.maximum = maximum
        self.limit = maximum
        self._in_flight = 0
        self._successes = 0
        self._recover_after = recover_after
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        if self._in_flight < self.limit and not self._waiters:
            self._in_flight += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # the slot is handed over (counted) before the waiter wakes
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot, then cancelled: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self._in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self._in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._in_flight += 1
                waiter.set_result(None)

    def throttled(self) -> None:
        """A 429 arrived: halve the width."""
        self.limit = max(1, self.limit // 2)
        self._successes = 0

    def succeeded(self) -> None:
        """A request went through: widen by one after a run of successes."""
        self._successes += 1
        if self._successes >= self._recover_after and self.limit < self.maximum:
            self.limit += 1
            self._successes = 0
            self._wake()
