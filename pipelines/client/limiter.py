"""A concurrency limit that halves on 429s and creeps back up on success (AIMD).

A fixed semaphore would keep hammering a rate-limited key at full width; backing off the width
lets the retries' sleeps and the service's quota line up, and the run speeds up again as soon
as the service stops complaining.
"""

import asyncio


class AdaptiveLimiter:
    def __init__(self, maximum: int, recover_after: int = 20) -> None:
        self.maximum = maximum
        self.limit = maximum
        self._in_flight = 0
        self._successes = 0
        self._recover_after = recover_after
        self._changed = asyncio.Condition()

    async def __aenter__(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self._in_flight < self.limit)
            self._in_flight += 1

    async def __aexit__(self, *exc: object) -> None:
        async with self._changed:
            self._in_flight -= 1
            self._changed.notify_all()

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
