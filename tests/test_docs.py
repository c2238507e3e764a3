"""The README is a quickstart, the reference is in docs/, and the pages stay true to each other
and to the code: every link and picture found, every table named, the daily job's lines the
same wherever they are shown. What the pages' code blocks do is run elsewhere: the SQL by
tests/warehouse/test_readme_queries.py, the Python by tests/warehouse/test_lake.py and
test_current_state.py (all through tests/docs.py)."""

import re
from pathlib import Path

from tests import docs
from warehouse.schemas import TABLES, Layout

# Pages whose links are checked besides the docs: those that point into them.
LINKING = [docs.ROOT / "ARCHITECTURE.md", docs.ROOT / "tests" / "README.md"]
QUICKSTART = ["Try it", "Connect your service", "Run it daily", "Query it"]


def without_code_blocks(text: str) -> str:
    """The text outside fenced blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def without_code(text: str) -> str:
    """The text outside fenced blocks and inline code spans."""
    return re.sub(r"``[^`]*``|`[^`\n]*`", "", without_code_blocks(text))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    words = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return words.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.*)$", without_code_blocks(page.read_text()), flags=re.M)
    return {anchor(h) for h in headings}


def test_the_readme_is_a_quickstart_of_at_most_150_lines():
    lines = docs.README.read_text().splitlines()
    assert len(lines) <= 150, len(lines)
    headings = [line[3:] for line in lines if line.startswith("## ")]
    assert headings[: len(QUICKSTART)] == QUICKSTART, headings
    connect = lines.index("## Connect your service")
    first_screen = "\n".join(lines[connect:50])
    for said in ("~/.config/ads-warehouse/env", "ADS_API_BASE_URL=", "adwh check", "adwh run"):
        assert said in first_screen, said


def test_every_link_and_picture_of_the_pages_is_found():
    """Relative links (and images) resolve from the page that holds them; an anchor names a
    heading of the page it points to."""
    broken = []
    for page in [*docs.pages(), *LINKING]:
        for target in re.findall(r"\]\(([^)\s]+)\)", without_code(page.read_text())):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            found = (page.parent / path).resolve() if path else page
            if not found.exists():
                broken.append(f"{page.name}: {target}")
            elif fragment and found.suffix == ".md" and fragment not in anchors(found):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_nothing_points_to_a_section_the_readme_no_longer_has():
    """The README's reference moved to docs/: a mention of one of its sections
    (`README.md#tables`, `README, "Tables"`) elsewhere names one it still has. The changelog
    says where they went, and is left out."""
    readme = anchors(docs.README)
    mention = re.compile(r'(?<![/\w])README(?:\.md)?(?:#([\w-]+)|,? \(?"([^"]+)")')
    places = [docs.ROOT / "ARCHITECTURE.md", docs.ROOT / "deploy"] + [
        docs.ROOT / folder for folder in ("assets", "pipelines", "warehouse", "bench", "tests")
    ]
    files = [f for place in places for f in ([place] if place.is_file() else place.rglob("*"))]
    files += [page for page in docs.pages() if page.name != "CHANGELOG.md"]
    files.remove(Path(__file__))  # its examples
    stale = [
        f"{f.relative_to(docs.ROOT)}: {hash_ or anchor(quoted)}"
        for f in files
        if f.is_file() and f.suffix in {".md", ".py", ".yaml", ".yml", ".example", ".sql", ""}
        for hash_, quoted in mention.findall(f.read_text(errors="replace"))
        if (hash_ or anchor(quoted)) not in readme
    ]
    assert not stale, stale


def test_the_tables_today_name_every_table_the_warehouse_holds():
    text = docs.ANALYSTS.read_text()
    listed = text[text.index("Tables today") :].split("\n\n", 1)[0]
    named = set(re.findall(r"`([\w<>]+)`", listed))
    expected = set(TABLES) | {"schema_changes", "warehouse_tables", "<t>_snapshots", "history_<t>"}
    assert expected <= named, expected - named
    table = docs.section(docs.ANALYSTS, "## Tables")
    for name in [*TABLES, "schema_changes", "<t>_snapshots"]:
        assert f"`{name}`" in table, name
    current = [name for name, t in TABLES.items() if t.layout is Layout.SNAPSHOT]
    assert re.search(rf"the\s{len(current)} of \[Tables\]", text), len(current)


def test_the_daily_jobs_cron_line_is_one_wherever_it_is_shown():
    """The README and docs/operators.md show the same line (a test runs it as cron would)."""
    shown = {page.name: docs.blocks("cron", page) for page in docs.pages()}
    lines = [block for blocks in shown.values() for block in blocks]
    assert shown["README.md"] and shown["operators.md"], shown
    assert len(set(lines)) == 1, lines
    (line,) = lines[0].splitlines()
    fields = line.split(None, 5)  # minute, hour, day, month, weekday, command
    assert fields[5].startswith("/path/to/ads-warehouse/.venv/bin/adwh run "), line


def test_the_systemd_units_shown_are_the_files_in_deploy():
    """docs/operators.md shows each unit of deploy/systemd/ as the file is, but for the
    comments at its top."""
    units = docs.ROOT / "deploy" / "systemd"
    shown = {
        block.splitlines()[0].rsplit("/", 1)[1]: block.split("\n", 1)[1]
        for block in docs.blocks("ini", docs.OPERATORS)
        if block.startswith("# ~/.config/systemd/user/")
    }
    assert set(shown) == {"adwh-daily.service", "adwh-daily.timer"}, set(shown)
    for name, body in shown.items():
        on_disk = (units / name).read_text()
        assert re.sub(r"\A(#.*\n)+", "", on_disk) == body, name
    service = shown["adwh-daily.service"]
    assert (
        "Type=oneshot" in service
        and "ExecStart=/path/to/ads-warehouse/.venv/bin/adwh run\n" in service
    )
    timer = shown["adwh-daily.timer"]
    assert "OnCalendar=*-*-* 06:17:00 UTC" in timer and "Persistent=true" in timer
