"""The pages the documentation is made of, for the tests that run or check what they say:
README.md (the quickstart) and every page under docs/. A test reads the pages through here, so
a code block moved from one page to another is still run."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
OPERATORS = DOCS / "operators.md"
ANALYSTS = DOCS / "analysts.md"
# The pages whose ```sql blocks are the queries a reader runs: each must have some.
SQL_PAGES = (README, ANALYSTS)


def pages() -> list[Path]:
    """README.md, then docs/*.md by name."""
    return [README, *sorted(DOCS.glob("*.md"))]


def text() -> str:
    """Every page, one after the other."""
    return "\n".join(page.read_text() for page in pages())


def blocks(language: str, page: Path | None = None) -> list[str]:
    """The fenced blocks of `language` (```sql …```), each as written: of `page`, or of every
    page in order."""
    found = []
    for each in [page] if page is not None else pages():
        found += re.findall(rf"^```{re.escape(language)}\n(.*?)^```", each.read_text(), re.S | re.M)
    return found


def section(page: Path, heading: str) -> str:
    """The section of `page` under `heading` (`## Marts`), to the next heading of its level or
    above."""
    level = len(heading) - len(heading.lstrip("#"))
    body = page.read_text().split(f"\n{heading}\n", 1)[1]
    return re.split(rf"\n#{{1,{level}}} ", body, maxsplit=1)[0]
