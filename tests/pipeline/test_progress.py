"""The live progress of `adwh run`: drawn while the run works, in a block that fits 80x24.

Dagster's compute log capture points descriptors 1 and 2 at the step's log files while a step
runs; the display once wrote there, and the terminal stayed blank until the step had ended.
The whole-run test drives the real CLI in a pseudo-terminal of 80x24 and reads it through a
small terminal model, while the service holds one source's request: what the screen shows
then is what a person sees while the run works.
"""

import asyncio
import codecs
import fcntl
import io
import os
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from pipelines.client.stats import RunStats
from pipelines.progress import RESERVED_ROWS, SOURCE_LINES, RunDisplay, report, shown
from pipelines.sources import SOURCES
from sandbox.app import SandboxApp
from sandbox.service import SandboxService
from tests.conftest import SECRET, TODAY, serving

REPO = Path(__file__).resolve().parents[2]
ROWS, COLUMNS = 24, 80
# The source whose requests the service holds until the terminal shows the run's progress:
# it runs in the same step as campaigns, whose pages arrive meanwhile.
HELD = "portfolios"
# How long the service holds them at most: only a run that draws nothing waits this long.
HOLD_SECONDS = 30
PAGES = re.compile(r"\b[1-9][\d,]* pages\b")
PROGRESS_LINE = re.compile(r"\d pages +[\d.]+ req/s")
# What rich writes to erase the frame it drew before: one `cursor up, erase line` per line.
ERASE_UP = re.compile(r"(?:\x1b\[1A\x1b\[2K)+")
TOKEN = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\r|\n|[^\x1b\r\n]+")


class Screen:
    """Just enough of a terminal to see what a person would: text written past the right
    edge wraps (and is noted), the cursor moves up no further than the top row, and a line
    scrolled off the top stays as it was, since nothing can erase it any more."""

    def __init__(self, rows: int = ROWS, columns: int = COLUMNS) -> None:
        self.columns = columns
        self.scrolled: list[str] = []
        self.lines = [""] * rows
        self.row = self.column = 0
        self.wrapped: list[str] = []  # the lines something was written past the edge of

    def feed(self, text: str) -> None:
        for match in TOKEN.finditer(text):
            token, (parameter, command) = match.group(), match.groups()
            if command == "A":
                self.row = max(0, self.row - int(parameter or 1))
            elif command == "K":
                kept = "" if parameter == "2" else self.lines[self.row][: self.column]
                self.lines[self.row] = kept
            elif command:
                continue  # colours, the cursor's visibility: nothing a line holds
            elif token == "\r":
                self.column = 0
            elif token == "\n":
                self.newline()
            else:
                self.write(token)

    def write(self, text: str) -> None:
        for char in text:
            if self.column == self.columns:
                self.wrapped.append(self.lines[self.row])
                self.newline()
                self.column = 0
            line = self.lines[self.row].ljust(self.column)
            self.lines[self.row] = line[: self.column] + char + line[self.column + 1 :]
            self.column += 1

    def newline(self) -> None:
        if self.row == len(self.lines) - 1:
            self.scrolled.append(self.lines.pop(0))
            self.lines.append("")
        else:
            self.row += 1

    def text(self) -> list[str]:
        """Every line the terminal holds, scrolled off or on screen."""
        return self.scrolled + self.lines


def test_a_source_leaves_the_block_when_it_ends_and_the_total_line_counts_it():
    console = Console(file=io.StringIO(), width=COLUMNS, height=ROWS, color_system=None)
    display = RunDisplay(console, len(SOURCES))
    for source in SOURCES:
        display.started(source.name)
        display.page(source.name, RunStats(requests=3, pages=2))
    for source in SOURCES[:-2]:
        display.finished(source.name)
    console.print(display.get_renderable())
    two_running = console.file.getvalue().splitlines()
    console.file = io.StringIO()
    for source in SOURCES[-2:]:
        display.finished(source.name)
    console.print(display.get_renderable())
    (none_running,) = console.file.getvalue().splitlines()
    assert f"{len(SOURCES) - 2} of {len(SOURCES)} done, 2 running" in two_running[0]
    assert f"{2 * len(SOURCES)} pages" in two_running[0]
    assert [line.split()[1] for line in two_running[1:]] == [s.name for s in SOURCES[-2:]]
    assert f"all {len(SOURCES)} fetched; checking, building" in none_running
    assert len(none_running) <= COLUMNS


def test_sources_beyond_the_budget_are_counted_not_drawn():
    for height in (ROWS, 5):
        console = Console(file=io.StringIO(), width=COLUMNS, height=height, color_system=None)
        display = RunDisplay(console, len(SOURCES))
        for source in SOURCES:
            display.started(source.name)
        console.print(display.get_renderable())
        lines = console.file.getvalue().splitlines()
        assert len(lines) == 1 + min(SOURCE_LINES, height - RESERVED_ROWS)
        assert f"0 of {len(SOURCES)} done, {len(SOURCES)} running" in lines[0]
        assert max(len(line) for line in lines) <= COLUMNS


def test_without_a_display_a_source_shows_nothing(capsys):
    """The UI's runs install no display: the runner's hooks must cost nothing and print
    nothing."""
    with shown("campaigns"):
        report("campaigns", RunStats(pages=1))
    assert capsys.readouterr() == ("", "")


def holding(path: str, held: threading.Event, released: threading.Event) -> type:
    """The sandbox's app, holding each request for `path` until `released` (or HOLD_SECONDS);
    `held` is set while it does."""

    class Held(SandboxApp):
        async def __call__(self, scope, receive, send) -> None:
            if scope["type"] == "http" and scope["path"].startswith(path):
                held.set()
                await asyncio.to_thread(released.wait, HOLD_SECONDS)
                held.clear()
            await super().__call__(scope, receive, send)

    return Held


def in_terminal(argv: list[str], env: dict[str, str], on_output: Callable[[str], None]) -> int:
    """`adwh ARGV` with a pseudo-terminal of ROWS x COLUMNS as stdin, stdout and stderr;
    `on_output(text)` with what it draws, as it draws it. Its exit code."""
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "launcher.cli", *argv],
        cwd=REPO,
        env=env,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        start_new_session=True,
    )
    os.close(terminal)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            if select.select([controller], [], [], 0.2)[0]:
                try:
                    data = os.read(controller, 65536)
                except OSError:  # every end of the terminal closed: the run is over
                    break
                on_output(decoder.decode(data))
            elif process.poll() is not None:
                break
        return process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)


def test_adwh_run_draws_its_progress_while_it_works_in_80_by_24(home, monkeypatch):
    """While the service holds a source's request, the terminal shows that source in flight
    and the pages received so far; the block stays within 80x24 and is gone at the end."""
    held, released = threading.Event(), threading.Event()
    monkeypatch.setattr("sandbox.app.SandboxApp", holding(f"/v1/{HELD}", held, released))
    screen, stream, while_held = Screen(), [], []

    def on_output(text: str) -> None:
        screen.feed(text)
        stream.append(text)
        visible = "\n".join(screen.lines)
        if held.is_set() and HELD in visible and PAGES.search(visible):
            while_held.append(visible)
            released.set()

    service = SandboxService("small", TODAY, key=SECRET)
    day = str(TODAY.replace(day=20))
    argv = ["run", "--start", day, "--end", day, "--tables", f"campaigns,{HELD}"]
    with serving(service) as url:
        rich_settings = ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")
        env = {k: v for k, v in os.environ.items() if k not in rich_settings}
        env |= {"TERM": "xterm-256color", "ADS_API_BASE_URL": url, "ADS_API_KEY": SECRET}
        code = in_terminal(argv, env, on_output)
    drawn, lines = "".join(stream), screen.text()
    assert code == 0, drawn[-2000:]
    assert while_held, (
        f"for the {HOLD_SECONDS} s the service held {HELD}'s request, the terminal never "
        "showed that source in flight beside a page received"
    )
    # The first line names the service and the home: a path is as long as it is.
    wrapped = [line for line in screen.wrapped if not line.startswith("adwh: reading ")]
    assert not wrapped, f"lines wider than {COLUMNS} columns: {wrapped}"
    erased = [len(run) // len("\x1b[1A\x1b[2K") for run in ERASE_UP.findall(drawn)]
    assert 1 + max(erased, default=0) <= ROWS - RESERVED_ROWS, "the block outgrew the terminal"
    assert not any(line.strip() in ("...", "…") for line in lines), "rich cut the block short"
    assert not [line for line in lines if PROGRESS_LINE.search(line)], "progress left behind"
    assert any(line.startswith("campaigns ") for line in lines), "no summary"
