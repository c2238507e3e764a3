"""Live progress of a CLI run: pages, rows and request rate per source.

Assets run in the CLI's own process (in-process executor), so the CLI installs a sink here and
the runner reports every page to it; under `dagster dev` no sink is installed and nothing prints.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from pipelines.client.stats import RunStats

Sink = Callable[[str, RunStats], None]
_sink: Sink | None = None


def report(source: str, stats: RunStats) -> None:
    if _sink is not None:
        _sink(source, stats)


@contextmanager
def live(enabled: bool = True) -> Iterator[None]:
    """Show one line per source while a run is going, on stderr."""
    global _sink
    if not enabled:
        yield
        return
    # Per source (one may feed several tables, whose rows the summary gives): its pages and
    # request rate, the figures the summary repeats per table.
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description:<28}"),
        TextColumn("{task.fields[pages]:>7} pages"),
        TextColumn("{task.fields[rate]:>7.1f} req/s"),
        TimeElapsedColumn(),
        transient=True,  # gone once the run ends: its summary says what it did
    )
    tasks: dict[str, int] = {}

    def sink(source: str, stats: RunStats) -> None:
        if source not in tasks:
            tasks[source] = progress.add_task(source, total=None, pages=0, rate=0.0)
        rate = stats.requests / stats.elapsed if stats.elapsed else 0.0
        progress.update(tasks[source], pages=stats.pages, rate=rate)

    _sink = sink
    try:
        with progress:
            yield
    finally:
        _sink = None
