"""Live progress of a CLI run: sources done, pages and request rate, and each source in flight.

Assets run in the CLI's own process (in-process executor), so the CLI installs a display here
and the runner tells it when each source starts and ends and every page it receives; under
`dagster dev` none is installed and nothing prints.

The display writes to a descriptor of its own on the terminal, taken before the run: while a
step runs, Dagster's compute log capture points descriptors 1 and 2 at the step's log files
(the UI's step logs), and rich, writing there, saw no terminal and drew nothing until the
step had ended.
"""

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from rich.console import Console, ConsoleDimensions, RenderableType
from rich.progress import (
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TimeElapsedColumn,
)
from rich.text import Text

from pipelines.client.stats import RunStats

# Sources given a line each, at most: a step extracts four at once (assets/runner.py), and the
# total line counts any beyond, so the block is a few lines whatever the registry holds.
SOURCE_LINES = 6
# Rows of the terminal the block leaves free: its total line's, and the cursor's below it.
RESERVED_ROWS = 2


class RateColumn(ProgressColumn):
    """Requests a second since the line began: the pace the service allows, which a rate
    limit or retries slow down."""

    def render(self, task: Task) -> Text:
        rate = task.fields["requests"] / task.elapsed if task.elapsed else 0.0
        return Text(f"{rate:>6.1f} req/s")


class RunDisplay(Progress):
    """A total line (sources done of the run's, pages, request rate, the run's time), then a
    line per source in flight, which leaves the block when the source ends: what moves is in
    view, and the block fits a small terminal whatever the number of sources.

    Transient: gone when the run ends, whose summary says what each table got."""

    def __init__(self, console: Console, sources: int) -> None:
        # What `get_renderables` measures: rich calls it before `self.console` exists.
        self.terminal = console
        super().__init__(
            SpinnerColumn(),
            "{task.description:<24}",
            "{task.fields[pages]:>7,} pages",
            RateColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            # A step's own prints belong to its captured log (the UI's), not to our terminal.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.sources = sources
        self.done = 0
        self.counted: dict[str, RunStats] = {}  # every source that received a page
        self.in_flight: dict[str, TaskID] = {}  # source: its line
        # From the start: Dagster prepares the run for seconds before the first source.
        self.total = self.add_task("", pages=0, requests=0)
        self._tally()

    def started(self, source: str) -> None:
        self.in_flight[source] = self.add_task(source, pages=0, requests=0)
        self._tally()

    def page(self, source: str, stats: RunStats) -> None:
        self.counted[source] = stats
        if source in self.in_flight:
            self.update(self.in_flight[source], pages=stats.pages, requests=stats.requests)
        self._tally()

    def finished(self, source: str) -> None:
        self.remove_task(self.in_flight.pop(source))
        self.done += 1
        self._tally()

    def _tally(self) -> None:
        """The total line, from what every source has counted so far; once every source is
        fetched, what the run does next (its checks, then the warehouse), seconds more."""
        fetched = self.done == self.sources and not self.in_flight
        self.update(
            self.total,
            description=f"all {self.sources} fetched; checking, building"
            if fetched
            else f"{self.done} of {self.sources} done, {len(self.in_flight)} running",
            pages=sum(stats.pages for stats in self.counted.values()),
            requests=sum(stats.requests for stats in self.counted.values()),
        )

    def get_renderables(self) -> Iterable[RenderableType]:
        """The total line and as many source lines as the budget and the terminal allow."""
        room = max(0, min(SOURCE_LINES, self.terminal.height - RESERVED_ROWS))
        yield self.make_tasks_table(self.tasks[: 1 + room])


class Terminal(Console):
    """A console measured on its own descriptor: rich measures descriptors 0 to 2, which the
    capture points at files while a step runs, and would then draw for 80x25 in any window
    (when stdin is not the terminal either)."""

    @property
    def size(self) -> ConsoleDimensions:
        try:
            width, height = os.get_terminal_size(self.file.fileno())
        except OSError:
            return super().size
        return ConsoleDimensions(width, height) if width and height else super().size


_display: RunDisplay | None = None


def report(source: str, stats: RunStats) -> None:
    """`source` received a page (the runner's `RunStats.on_page`)."""
    if _display is not None:
        _display.page(source, stats)


@contextmanager
def shown(source: str) -> Iterator[None]:
    """`source` has a line in the block while it is extracted, however its extraction ends."""
    display = _display
    if display is None:
        yield
        return
    display.started(source)
    try:
        yield
    finally:
        display.finished(source)


@contextmanager
def live(enabled: bool, sources: int) -> Iterator[None]:
    """Show the run's progress on the terminal of stderr while the block runs; `sources`: how
    many the run extracts, for the total line."""
    global _display
    if not enabled:
        yield
        return
    descriptor = os.dup(sys.stderr.fileno())  # before the run: the capture does not move it
    with open(descriptor, "w", encoding=sys.stderr.encoding, errors="replace") as terminal:
        display = RunDisplay(Terminal(file=terminal), sources)
        _display = display
        try:
            with display:
                yield
        finally:
            _display = None
