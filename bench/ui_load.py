"""How long the Dagster UI's pages take to show what a person opens them for, in headless
Chromium (Debian's package, through Playwright, as `make screenshots`): the time from asking
for the page to its content shown and nothing left loading. The browser is warm (one visit
before), as a person's is after their first page."""

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Playwright is the bench's and the docs' dependency group, not the product's
    from playwright.sync_api import Page

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Each page, and a text it shows once its data has come (the screenshots wait for the same).
PAGES = {
    "assets (campaign_metrics)": ("/assets/campaign_metrics", ["Columns", "impressions"]),
    "runs": ("/runs", ["extract", "Success"]),
}


def page_load_seconds(base: str, timeout_s: float = 120) -> dict[str, float | None]:
    """Seconds each of PAGES took to load from the webserver at `base`; None for every page
    when this machine has no Chromium or Playwright (`make bench-scale` installs Playwright)."""
    try:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        from playwright.sync_api import sync_playwright
    except ImportError:
        return dict.fromkeys(PAGES)
    if not Path(CHROMIUM).exists():
        return dict.fromkeys(PAGES)
    timings: dict[str, float | None] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(base)
        dismiss_first_visit(page)
        for name, (path, must_show) in PAGES.items():
            started = time.perf_counter()
            page.goto(base + path)
            try:
                wait_for_content(page, must_show, timeout_s)
            except PlaywrightTimeout:
                timings[name] = None
                continue
            timings[name] = time.perf_counter() - started
        browser.close()
    return timings


def dismiss_first_visit(page: "Page") -> None:
    """The UI's first-visit newsletter prompt, skipped when it shows within 5 s."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    skip = page.get_by_role("button", name="Skip")
    try:
        skip.wait_for(timeout=5_000)
        skip.click()
    except PlaywrightTimeout:
        pass


def wait_for_content(page: "Page", must_show: list[str], timeout_s: float) -> None:
    """Until the page shows every text of `must_show` and nothing says it is loading; raises
    Playwright's TimeoutError after `timeout_s` on one of them."""
    for text in must_show:
        page.get_by_text(text, exact=False).first.wait_for(timeout=timeout_s * 1000)
    loading = page.get_by_text("Loading", exact=False)
    for index in range(loading.count()):
        loading.nth(index).wait_for(state="hidden", timeout=timeout_s * 1000)
