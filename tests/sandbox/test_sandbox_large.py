"""The `large` preset: pages of a month of daily target metrics, and the cluster limit."""

from tests.sandbox.conftest import ask, ok

JANUARY = {"start_date": "2026-01-01", "end_date": "2026-01-31", "granularity": "daily"}


def test_the_large_preset_has_its_sizes(large):
    account = large.main_account
    assert len(account.products) == 20_000
    assert len(account.campaigns) == 2_000
    assert len(account.targets) == 50_000


def test_a_page_at_the_end_of_a_month_of_daily_target_metrics_holds_its_last_rows(large):
    """Computed on demand whatever the offset; how fast is the benchmark's to say (`make bench`
    extracts the large preset)."""
    first = ok(large, "/v1/target-metrics", limit=1000, include_total="true", **JANUARY)
    assert len(first["data"]) == 1000 and first["has_more"] is True
    assert first["total_count"] > 20_000
    page = ok(large, "/v1/target-metrics", limit=1000, offset=first["total_count"] - 10, **JANUARY)
    assert len(page["data"]) == 10 and page["has_more"] is False
    assert {row["date"] for row in page["data"]} == {"2026-01-01"}  # newest first by default


def test_cluster_grouping_over_2000_memberships_needs_the_cluster_filter(large):
    window = {"start_date": "2026-10-01", "end_date": "2026-10-31"}
    status, body = ask(large, "/v1/seller-product-metrics", ("group_by", "cluster"), **window)
    assert status == 400 and "limit of 2000" in body["error"]["message"]
    clusters = [("cluster", c["id"]) for c in large.main_account.clusters[:10]]
    rows = ok(large, "/v1/seller-product-metrics", ("group_by", "cluster"), *clusters, **window)
    assert {row["cluster"] for row in rows["data"]} == {c for _, c in clusters}
