"""Where the spec leaves a shape open, every reasonable answer is read, and read exactly.

Pages are built from JSON text, as the client receives them, and typed by the same `Output`
the pipeline uses: money as a decimal string or a JSON number (spec 1 versus 2.2), counts as
integers however written, timestamps with or without fractions and with `Z` or an offset,
related fields as an id or as the expanded object, enumerations the spec does not close, a
field whose name the spec leaves open under each of its names.
"""

import json
from datetime import UTC, datetime
from decimal import Decimal

import orjson
import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pipelines.client.paging import Page
from pipelines.shaping import Context
from pipelines.sources import SOURCES
from pipelines.sources.model import Output
from transforms.evolution import unknown_values
from transforms.records import json_text
from warehouse import schemas as s
from warehouse.contracts import ContractError, validate

NOW = datetime(2026, 11, 23, tzinfo=UTC)
ACCOUNT = "a" * 24
CAMPAIGN = "0123456789abcdef01234567"
CONTEXT = Context(NOW.date(), b"k" * 32)


def typed(schema: s.TableSchema, text: str) -> pl.DataFrame:
    """The frame the pipeline makes of one page whose body is `text`."""
    content = text.encode()
    page = Page("/v1/x", {}, orjson.loads(content), content)
    return Output(schema).frame([("test", page)], ACCOUNT, NOW, CONTEXT)


def campaign(**fields: str) -> str:
    """A campaign record as JSON text, its fields given as JSON text too."""
    body = ", ".join(f'"{name}": {value}' for name, value in fields.items())
    return f'{{"data": [{{"id": "{CAMPAIGN}", "adProduct": "SP", {body}}}]}}'


@pytest.mark.parametrize(
    ("served", "kept"),
    [
        ("1.1", "1.1"),
        ("0.35", "0.35"),
        ("1500", "1500"),
        ("1500.00", "1500"),
        ("12.3456", "12.3456"),
        ("98765432109876.54", "98765432109876.54"),  # 16 digits: a float would say ...76.55
        ("1.5E+3", "1500"),
        ('"1.1"', "1.1"),
        ('"0.35"', "0.35"),
        ('"1500"', "1500"),
        ('"12.3456"', "12.3456"),
        ('"98765432109876.54"', "98765432109876.54"),
        ("null", None),
    ],
)
def test_money_arrives_as_a_string_or_a_number_and_keeps_every_digit(served, kept):
    frame = typed(s.CAMPAIGNS, campaign(budget=f'{{"amount": {served}, "currency": "USD"}}'))
    assert frame["budget_amount"].to_list() == [None if kept is None else Decimal(kept)]


@given(
    st.decimals(
        min_value=Decimal("-99999999999999.9999"),
        max_value=Decimal("99999999999999.9999"),
        places=4,
        allow_nan=False,
        allow_infinity=False,
    ),
    st.booleans(),
)
@example(Decimal("98765432109876.54"), False)
@example(Decimal("0.1"), False)
def test_any_amount_the_warehouse_can_hold_lands_exactly_in_either_shape(amount, as_string):
    token = f'"{amount:f}"' if as_string else f"{amount:f}"
    frame = typed(s.CAMPAIGN_METRICS, _metrics_row(cost=token))
    assert frame["cost"].to_list() == [amount]


def _metrics_row(**fields: str) -> str:
    base = {
        "campaign": f'"{CAMPAIGN}"',
        "date": '"2026-10-01"',
        "currency": '"USD"',
        "ad_product": '"SP"',
    }
    body = ", ".join(f'"{k}": {v}' for k, v in (base | fields).items())
    return f'{{"data": [{{{body}}}]}}'


@pytest.mark.parametrize("served", ["12", "12.0", '"12"'])
def test_counts_are_integers_however_written(served):
    frame = typed(s.CAMPAIGN_METRICS, _metrics_row(clicks=served))
    assert frame["clicks"].to_list() == [12]


@pytest.mark.parametrize(
    "served",
    [
        "2026-11-01T10:00:05Z",
        "2026-11-01T10:00:05.000Z",
        "2026-11-01T10:00:05+00:00",
        "2026-11-01T10:00:05.000000+00:00",
        "2026-11-01T12:00:05+02:00",
        "2026-11-01T10:00:05",
    ],
)
def test_timestamps_with_or_without_fractions_and_any_utc_suffix(served):
    frame = typed(s.CAMPAIGNS, campaign(createdAt=f'"{served}"'))
    assert frame["created_at"].to_list() == [datetime(2026, 11, 1, 10, 0, 5)]


def test_fractional_seconds_are_kept():
    frame = typed(s.CAMPAIGNS, campaign(updatedAt='"2026-11-01T10:00:05.123456Z"'))
    assert frame["updated_at"].to_list() == [datetime(2026, 11, 1, 10, 0, 5, 123456)]


def test_a_related_field_is_an_id_or_the_expanded_object():
    connection = "c" * 24
    expanded = f'{{"id": "{connection}", "type": "adv-profile", "name": "Ads US"}}'
    as_object = typed(s.CAMPAIGNS, campaign(connection=expanded))
    as_id = typed(s.CAMPAIGNS, campaign(connection=f'"{connection}"'))
    assert as_object["connection"].to_list() == as_id["connection"].to_list() == [connection]
    countries = f'[{{"id": "{"d" * 24}", "code": "US", "name": "United States"}}]'
    record = f'{{"data": [{{"id": "{connection}", "countries": {countries}}}]}}'
    assert typed(s.CONNECTIONS, record)["countries"].to_list() == [["d" * 24]]


def test_enumerations_the_spec_leaves_open_accept_new_values():
    frame = typed(
        s.CAMPAIGNS,
        campaign(deliveryStatus='"PAUSED_BY_MARKETPLACE"', deliveryReasons='["NEW_REASON"]'),
    )
    validate(s.CAMPAIGNS, frame, "test")
    portfolio = '{"data": [{"id": "%s", "state": "SUSPENDED"}]}' % ("e" * 24)
    validate(s.PORTFOLIOS, typed(s.PORTFOLIOS, portfolio), "test")


def test_enumerations_the_spec_closes_still_refuse_other_values():
    frame = typed(s.CAMPAIGNS, campaign(state='"RUNNING"'))
    with pytest.raises(ContractError, match="state"):
        validate(s.CAMPAIGNS, frame, "test")


def test_a_string_field_that_arrives_as_a_number_keeps_its_digits():
    frame = typed(s.CAMPAIGNS, campaign(campaignId="123456789012345678901"))
    assert frame["campaign_id"].to_list() == ["123456789012345678901"]


CHANGED = "fedcba9876543210fedcba98"


def change_log_page(entity: str) -> Page:
    """One change log row naming its changed entity by `entity` (JSON text: `"name": value`)."""
    content = (
        f'{{"object": "list", "has_more": false, "data": [{{"id": "{"c" * 24}", '
        f'"changed_at": "2026-11-01T10:00:05Z", "entity_type": "target", {entity}}}]}}'
    ).encode()
    asked = {"start_date": "2026-11-01", "end_date": "2026-11-01"}
    return Page("/v1/advertising-changes", asked, orjson.loads(content), content)


@pytest.mark.parametrize("name", ["entity_id", "entity", "entityId"])
@pytest.mark.parametrize("value", [f'"{CHANGED}"', f'{{"id": "{CHANGED}", "object": "target"}}'])
def test_the_change_logs_entity_is_its_id_under_whichever_name_it_is_sent(name, value):
    """Spec 4.8 names the log's filter `entity` and shows no row fields: a service may name the
    changed entity as its filter is. Under any of its names it is `entity_id`, the column the
    history and the change-log mart join on, and never a column of its own."""
    page = change_log_page(f'"{name}": {value}')
    (output,) = next(source for source in SOURCES if source.name == "advertising_changes").outputs
    frame = output.frame([("test", page)], ACCOUNT, NOW, CONTEXT)
    assert frame["entity_id"].to_list() == [CHANGED]
    assert unknown_values(page.rows, s.ADVERTISING_CHANGES) == {}


json_values = st.recursive(
    st.one_of(
        st.decimals(
            allow_nan=False, allow_infinity=False, places=6, min_value=-(10**12), max_value=10**12
        ),
        st.integers(min_value=-(2**80), max_value=2**80),
        st.text(max_size=5),
        st.booleans(),
        st.none(),
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(json_values)
@example({"bid": Decimal("0.10"), "budget": [2**70, Decimal("-1234567890.123456")]})
def test_a_json_columns_numbers_keep_their_digits(value):
    """A JSON column's text holds every number as the page wrote it: an exact re-read's
    `Decimal` and an integer wider than 64 bits, which orjson alone cannot write."""
    assert json.loads(json_text(value), parse_float=Decimal) == value
