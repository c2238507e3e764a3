"""Screenshots of the Dagster UI after `make demo`, for docs/operators.md (`make screenshots`).

Runs the demo in a scratch `ADWH_HOME`, starts `adwh ui` (`dg dev`, as `make dagster`) on it,
and drives headless Chromium (Debian's package, through Playwright) to the pages a newcomer
opens: the asset graph down to the marts, a mart's lineage back to the table it reads, an
asset with its columns and latest materialization, its contract and reconciliation checks, a
mart's columns (every one, typed, with the dbt docs' descriptions) and its dbt tests. Between
the demo and the pictures, a daily run with a refused key and a good one: the graph and a
table's partitions must show nothing failed.
Each page is checked for what it must show before it is captured, so a screenshot of an empty
UI fails instead of landing in the docs.
"""

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, sync_playwright
from rich.console import Console
from rich.terminal_theme import MONOKAI
from rich.text import Text

from bench.deployment import local_ui
from bench.ui_load import dismiss_first_visit, wait_for_content

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
PORT = 3333
TODAY = "2026-11-23"
VIEWPORT = {"width": 1600, "height": 1000}
TERMINAL_ROWS = 45


def adwh(home: Path, *argv: str, check: bool = True, **extra: str) -> None:
    env = {**os.environ, "ADWH_HOME": str(home), "ADWH_TODAY": TODAY, **extra}
    env.pop("DAGSTER_HOME", None)
    subprocess.run([str(ROOT / ".venv/bin/adwh"), *argv], env=env, check=check, cwd=ROOT)


def in_tmux(home: Path, argv: list[str], **extra: str) -> str:
    """`adwh <argv>` run in a tmux pane of 80 columns (a real terminal: live progress, colours),
    after a prompt line; the pane's text with its colours, once the command ended."""
    env = {"ADWH_HOME": str(home), "ADWH_TODAY": TODAY, **extra}
    shown = shlex.join(["adwh", *argv])
    channel = f"adwh-{uuid.uuid4().hex[:8]}"
    command = (
        f"printf '$ %s\\n' {shlex.quote(shown)}; "
        f"env -u DAGSTER_HOME {shlex.join(f'{k}={v}' for k, v in env.items())} "
        f"{shlex.join([str(ROOT / '.venv/bin/adwh'), *argv])}; "
        f"tmux wait-for -S {channel}; sleep 600"
    )
    tmux = ["tmux", "-L", channel]
    subprocess.run(
        [
            *tmux,
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            str(TERMINAL_ROWS),
            "-c",
            str(ROOT),
            command,
        ],
        check=True,
    )
    try:
        subprocess.run([*tmux, "wait-for", channel], check=True, timeout=900)
        pane = [*tmux, "capture-pane", "-p", "-e", "-J"]
        return subprocess.run(pane, check=True, capture_output=True, text=True).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], check=False)


def terminal_shot(page: Page, ansi: str, must_show: list[str], name: str) -> Path:
    """A terminal's text (ANSI colours) drawn as a dark terminal, checked, then captured."""
    missing = [text for text in must_show if text not in Text.from_ansi(ansi).plain]
    if missing:
        raise RuntimeError(f"{name}: the terminal does not show {missing}:\n{ansi}")
    console = Console(record=True, width=80, file=io.StringIO(), force_terminal=True)
    console.print(Text.from_ansi(ansi.rstrip() + "\n"))
    page.set_content(console.export_html(theme=MONOKAI, inline_styles=True))
    path = IMAGES / f"{name}.png"
    page.locator("pre").screenshot(path=str(path))
    return path


def runs_link(followed: str) -> str:
    """The link `adwh backfill` prints to the UI's runs page, filtered to its runs."""
    found = re.search(r"^http://\S+/runs\?\S+$", Text.from_ansi(followed).plain, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"adwh backfill printed no link to its runs:\n{followed}")
    return found.group(0)


def run_demo(home: Path) -> str:
    """`make demo`'s run, in a terminal."""
    return in_tmux(home, ["demo"])


def bad_key_then_good_run(home: Path) -> None:
    """A daily run whose key the service refuses (the embedded sandbox with another key: the
    home's own service, so the home lets it ask), then a good daily run: the UI must show no
    failed partition for data the warehouse holds."""
    adwh(home, "run", check=False, ADS_API_KEY="revoked-key")
    adwh(home, "run")


@contextmanager
def dagster_ui(home: Path):
    """`adwh ui` on `home`, as `make dagster` starts it."""
    with local_ui(home, home / "dagster-ui.log", {"ADWH_TODAY": TODAY}) as url:
        yield url


def capture(page: Page, url: str, must_show: list[str], name: str) -> Path:
    page.goto(url)
    dismiss_first_visit(page)
    try:
        wait_for_content(page, must_show, timeout_s=60)
    except Exception:
        page.screenshot(path=str(IMAGES / f"{name}-failed.png"))
        raise
    page.wait_for_timeout(1500)  # let the graph finish laying out
    path = IMAGES / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="adwh-screens-"))
    try:
        demo = run_demo(home)
        bad_key_then_good_run(home)
        query = "SELECT date, currency, spend, sales, acos FROM mart_account_daily LIMIT 8"
        sql = in_tmux(home, ["sql", query])
        with dagster_ui(home) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page(viewport=VIEWPORT)
            backfill = ["backfill", "--start", "2026-11-20", "--end", "2026-11-22"]
            followed = in_tmux(home, backfill, ADWH_DAGSTER_URL=base)
            shots = [
                terminal_shot(page, demo, ["tables,", "warehouse:", "next"], "terminal-demo"),
                terminal_shot(page, sql, ["spend", "acos"], "terminal-sql"),
                terminal_shot(
                    page,
                    followed,
                    ["runs", "building the warehouse", "warehouse built"],
                    "terminal-backfill",
                ),
                capture(page, runs_link(followed), ["extract", "Success"], "runs-of-a-backfill"),
                capture(page, f"{base}/asset-groups", ["metrics", "marts"], "graph"),
                capture(
                    page,
                    f"{base}/assets/mart_account_daily?view=lineage&lineageScope=upstream",
                    ["mart_account_daily", "campaign_metrics"],
                    "lineage",
                ),
                capture(
                    page,
                    f"{base}/assets/campaign_metrics",
                    ["Columns", "impressions"],
                    "asset",
                ),
                capture(
                    page,
                    f"{base}/assets/campaign_metrics?view=checks",
                    ["contract", "reconciled"],
                    "check",
                ),
                capture(
                    page,
                    f"{base}/assets/mart_account_daily",
                    ["Columns", "spend", "DECIMAL"],
                    "mart-columns",
                ),
                capture(
                    page,
                    f"{base}/assets/mart_account_daily?view=checks",
                    ["Latest execution", "failing rows"],
                    "mart-checks",
                ),
                capture(
                    page,
                    f"{base}/assets/campaign_metrics?view=partitions",
                    ["Partitions", "Materialized"],
                    "partitions-after-bad-key",
                ),
            ]
            browser.close()
        for shot in shots:
            print(shot.relative_to(ROOT))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
