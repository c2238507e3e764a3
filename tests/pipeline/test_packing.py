"""How accounts are packed into runs: small ones together, a large one alone, none lost."""

import duckdb
from hypothesis import given
from hypothesis import strategies as st

from pipelines.destination import Destination
from pipelines.fanout import (
    ACCOUNTS_TAG,
    KEY_TAG,
    ROWS_PER_RUN,
    pack_accounts,
    pack_runs,
)
from pipelines.settings import load_settings
from tests.conftest import copy_of_a_run
from warehouse.schemas import TABLES, Layout

BUDGET, COUNT = 1_000, 4
SPAN_END = "2026-11-20"
sizes = st.dictionaries(
    st.text("abcdef0123456789", min_size=1, max_size=6), st.integers(0, 3_000), max_size=40
)


@given(sizes, st.integers(1, 40))
def test_every_account_is_in_exactly_one_pack(rows_per_day, days):
    packs = pack_accounts(rows_per_day, days, BUDGET, COUNT)
    packed = [account for pack in packs for account in pack.accounts]
    assert sorted(packed) == sorted(rows_per_day)


@given(sizes, st.integers(1, 40))
def test_a_pack_keeps_to_the_budget_and_a_large_account_runs_alone(rows_per_day, days):
    for pack in pack_accounts(rows_per_day, days, BUDGET, COUNT):
        assert pack.rows == sum(rows_per_day[a] * days for a in pack.accounts)
        assert len(pack.accounts) <= COUNT
        if len(pack.accounts) > 1:
            assert pack.rows <= BUDGET
            assert all(rows_per_day[a] * days < BUDGET // 2 for a in pack.accounts)


@given(sizes, st.integers(1, 40))
def test_packing_is_the_same_every_time_whatever_the_order(rows_per_day, days):
    reversed_order = dict(reversed(list(rows_per_day.items())))
    assert pack_accounts(rows_per_day, days, BUDGET, COUNT) == pack_accounts(
        reversed_order, days, BUDGET, COUNT
    )


@given(sizes, st.integers(1, 40))
def test_a_pack_holds_neighbouring_accounts(rows_per_day, days):
    """The packs, one after the other, hold the accounts in the order of their ids: no account
    of another pack sorts between a pack's first and last, so its files' `account_id`
    statistics exclude every other pack's (`Lake.scan`)."""
    packs = pack_accounts(rows_per_day, days, BUDGET, COUNT)
    assert [account for pack in packs for account in pack.accounts] == sorted(rows_per_day)


@given(st.integers(1, 60), st.integers(0, BUDGET // 2 - 1))
def test_equal_small_accounts_fill_packs_as_far_as_budget_and_count_allow(accounts, rows):
    """As few runs as the rows and the count per run allow: no pack is closed early."""
    packs = pack_accounts({f"a{i}": rows for i in range(accounts)}, 1, BUDGET, COUNT)
    per_pack = min(COUNT, BUDGET // rows) if rows else COUNT
    assert len(packs) == -(-accounts // per_pack)


def test_a_large_account_alone_and_the_small_ones_together():
    packs = pack_accounts({"big": 600, "s1": 10, "s2": 20, "s3": 5}, 1, BUDGET, COUNT)
    assert [p.accounts for p in packs] == [("big",), ("s1", "s2", "s3")]


def test_runs_are_packed_by_what_the_lake_holds_of_each_account(home, embedded, tmp_path_factory):
    """Each account weighs its rows on the newest day of every dated table (counted here from
    the warehouse); an account the lake does not hold is guessed small."""
    ran = copy_of_a_run(home, tmp_path_factory, ["run", "--start", "2026-11-18", "--end", SPAN_END])
    settings = load_settings()
    weights = Destination.of(settings).lake.rows_per_account_day()
    with duckdb.connect(str(ran / "warehouse.duckdb"), read_only=True) as con:
        counted: dict[str, int] = {}
        for schema in TABLES.values():
            if schema.layout is Layout.SNAPSHOT:
                continue
            for account, rows in con.execute(
                f"SELECT account_id, count(*) FROM {schema.name} "
                f"WHERE date = (SELECT max(date) FROM {schema.name}) GROUP BY 1"
            ).fetchall():
                counted[account] = counted.get(account, 0) + rows
    assert weights == counted and counted
    (held,) = counted
    runs = pack_runs(settings, 3, [held, "acc_never_seen"])
    assert [run[ACCOUNTS_TAG] for run in runs] == [",".join(sorted([held, "acc_never_seen"]))]
    assert all(len(run[KEY_TAG]) == 12 for run in runs)
    lone = pack_runs(settings, ROWS_PER_RUN // counted[held], [held, "acc_never_seen"])
    assert sorted(run[ACCOUNTS_TAG] for run in lone) == sorted([held, "acc_never_seen"])
