"""The adaptive limiter: never wider than its limit, fair, and no slot lost to cancellation."""

import asyncio

from pipelines.client.limiter import AdaptiveLimiter


def test_never_more_in_flight_than_the_limit_and_first_come_first_served():
    async def go() -> tuple[int, list[int]]:
        limiter = AdaptiveLimiter(3)
        in_flight = peak = 0
        order: list[int] = []

        async def one(number: int) -> None:
            nonlocal in_flight, peak
            async with limiter:
                order.append(number)
                in_flight += 1
                peak = max(peak, in_flight)
                await asyncio.sleep(0.001)
                in_flight -= 1

        await asyncio.gather(*(one(n) for n in range(200)))
        return peak, order

    peak, order = asyncio.run(go())
    assert peak == 3
    assert order == list(range(200))


def test_throttling_halves_the_width_and_successes_widen_it_again():
    async def go() -> list[int]:
        limiter = AdaptiveLimiter(8, recover_after=2)
        limiter.throttled()
        limiter.throttled()
        widths = [limiter.limit]
        in_flight = peak = 0

        async def one() -> None:
            nonlocal in_flight, peak
            async with limiter:
                in_flight += 1
                peak = max(peak, in_flight)
                await asyncio.sleep(0.001)
                in_flight -= 1
                limiter.succeeded()

        await asyncio.gather(*(one() for _ in range(4)))
        widths += [peak, limiter.limit]
        return widths

    assert asyncio.run(go()) == [2, 2, 4]


def test_cancelled_waiters_give_back_their_slots():
    async def go() -> int:
        limiter = AdaptiveLimiter(1)
        release = asyncio.Event()

        async def holder() -> None:
            async with limiter:
                await release.wait()

        async def waiter() -> None:
            async with limiter:
                await asyncio.sleep(0)

        first = asyncio.create_task(holder())
        await asyncio.sleep(0)
        waiting = [asyncio.create_task(waiter()) for _ in range(5)]
        await asyncio.sleep(0)
        release.set()
        waiting[0].cancel()  # handed the slot on release, cancelled before it ran
        waiting[3].cancel()  # still queued
        await asyncio.gather(first, *waiting, return_exceptions=True)
        async with limiter:  # the slot is free again
            return limiter._in_flight

    assert asyncio.run(go()) == 1
