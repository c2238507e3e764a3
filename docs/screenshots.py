"""Screenshots of the Dagster UI after `make demo`, for the README (`make screenshots`).

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

import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
from playwright.sync_api import Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.deployment import local_ui

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
PORT = 3333
TODAY = "2026-11-23"
VIEWPORT = {"width": 1600, "height": 1000}


def adwh(home: Path, *argv: str, check: bool = True, **extra: str) -> None:
    env = {**os.environ, "ADWH_HOME": str(home), "ADWH_TODAY": TODAY, **extra}
    env.pop("DAGSTER_HOME", None)
    subprocess.run([str(ROOT / ".venv/bin/adwh"), *argv], env=env, check=check, cwd=ROOT)


def run_demo(home: Path) -> None:
    adwh(home, "demo")


def bad_key_then_good_run(home: Path) -> None:
    """A daily run whose key the service refuses (the sandbox over HTTP, another key), then a
    good daily run: the UI must show no failed partition for data the warehouse holds."""
    port = str(PORT + 1)
    serve = [str(ROOT / ".venv/bin/adwh"), "sandbox", "serve", "--port", port]
    server = subprocess.Popen(serve, env={**os.environ, "ADWH_TODAY": TODAY}, cwd=ROOT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{url}/health", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        adwh(home, "run", check=False, ADS_API_BASE_URL=url, ADS_API_KEY="revoked-key")
    finally:
        server.terminate()
        server.wait(30)
    adwh(home, "run")


@contextmanager
def dagster_ui(home: Path):
    """`adwh ui` on `home`, as `make dagster` starts it."""
    with local_ui(home, home / "dagster-ui.log", {"ADWH_TODAY": TODAY}) as url:
        yield url


def capture(page: Page, url: str, must_show: list[str], name: str) -> Path:
    page.goto(url)
    skip = page.get_by_role("button", name="Skip")  # the first visit's newsletter prompt
    try:
        skip.wait_for(timeout=5_000)
        skip.click()
    except PlaywrightTimeout:
        pass
    try:
        for text in must_show:
            page.get_by_text(text, exact=False).first.wait_for(timeout=60_000)
    except Exception:
        page.screenshot(path=str(IMAGES / f"{name}-failed.png"))
        raise
    loading = page.get_by_text("Loading", exact=False)
    for index in range(loading.count()):
        loading.nth(index).wait_for(state="hidden", timeout=60_000)
    page.wait_for_timeout(1500)  # let the graph finish laying out
    path = IMAGES / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="adwh-screens-"))
    try:
        run_demo(home)
        bad_key_then_good_run(home)
        with dagster_ui(home) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page(viewport=VIEWPORT)
            shots = [
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
