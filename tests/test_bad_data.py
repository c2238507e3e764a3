"""Bad data from the service: named precisely, held back alone, raw kept, the rest published."""

import gzip
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main

BAD_DAY = "2026-10-03"


def corrupt(service, monkeypatch, mutate) -> None:
    """Make the sandbox answer campaign metrics with `mutate` applied to BAD_DAY's rows."""
    original = service.handle

    def handle(method, path, query, headers):
        status, body, extra = original(method, path, query, headers)
        if path == "/v1/campaign-metrics" and body and "data" in body:
            body = {
                **body,
                "data": [mutate(dict(r)) if r.get("date") == BAD_DAY else r for r in body["data"]],
            }
        return status, body, extra

    monkeypatch.setattr(service, "handle", handle)


def day_rows(home: Path) -> dict[str, int]:
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return dict(
            con.sql(
                "SELECT strftime(date, '%Y-%m-%d'), count(*) FROM campaign_metrics GROUP BY ALL"
            ).fetchall()
        )


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda r: r | {"cost": "12.345678"}, "campaign_metrics.cost"),
        (lambda r: r | {"cost": 12.5}, "expected a decimal string"),
        (lambda r: r | {"ad_product": "XX"}, "isin"),
        (lambda r: r | {"campaign": "../../x"}, "str_matches"),
        (lambda r: r | {"currency": "usd"}, "currency"),
        (lambda r: {k: v for k, v in r.items() if k != "campaign"}, "required field missing"),
    ],
)
def test_a_bad_value_holds_back_only_its_partition(
    home, embedded, monkeypatch, capsys, mutate, fragment
):
    assert (
        main(
            ["run", "--start", "2026-10-01", "--end", "2026-10-05", "--tables", "campaign_metrics"]
        )
        == 0
    )
    before = day_rows(home)
    capsys.readouterr()
    corrupt(embedded, monkeypatch, mutate)
    assert (
        main(
            ["run", "--start", "2026-10-01", "--end", "2026-10-05", "--tables", "campaign_metrics"]
        )
        == 1
    )
    err = capsys.readouterr().err.strip()
    assert fragment in err and BAD_DAY in err and len(err.splitlines()) == 1
    assert day_rows(home) == before  # the held-back day keeps its previous state
    lake = home / "lake" / "campaign_metrics"
    assert sorted(p.name for p in lake.iterdir()) == [f"date=2026-10-0{d}" for d in range(1, 6)]
    raw_pages = list((home / "raw" / "campaign_metrics").rglob("page-*.json.gz"))
    assert any(BAD_DAY.encode() in gzip.decompress(p.read_bytes()) for p in raw_pages)


def test_an_unknown_field_is_reported_not_fatal(home, embedded, monkeypatch, capsys):
    corrupt(embedded, monkeypatch, lambda r: r | {"brand_new_metric": 3})
    assert (
        main(
            ["run", "--start", "2026-10-01", "--end", "2026-10-05", "--tables", "campaign_metrics"]
        )
        == 0
    )
    assert BAD_DAY in day_rows(home)


def test_the_same_row_on_two_pages_is_refused(home, embedded, monkeypatch, capsys):
    original = embedded.handle

    def handle(method, path, query, headers):
        status, body, extra = original(method, path, query, headers)
        if path == "/v1/campaign-metrics" and body and body.get("data"):
            body = {**body, "data": body["data"] + body["data"][:1]}
        return status, body, extra

    monkeypatch.setattr(embedded, "handle", handle)
    assert (
        main(
            ["run", "--start", "2026-10-01", "--end", "2026-10-05", "--tables", "campaign_metrics"]
        )
        == 1
    )
    assert "uniqueness" in capsys.readouterr().err
