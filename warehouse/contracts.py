"""Pandera contracts, one per table, derived from the schema registry.

They run on every partition before it is published: ids match the spec's pattern, currency
codes are ISO 4217 codes, counts and ratios are non-negative, closed enums hold only the
spec's values, natural keys are unique. A failure names table, partition, column and value.
"""

import pandera.polars as pa
import polars as pl

from warehouse.schemas import ACCOUNT_ID, POLARS_TYPES, Kind, TableSchema

ID_PATTERN = r"^[a-f0-9]{24}$"
CURRENCY_PATTERN = r"^[A-Z]{3}$"
# ISO 4217 currencies in use (2025), without the test and "no currency" codes (XTS, XXX): a
# well-formed but unknown code is as wrong as a malformed one, and money must never be kept in
# a currency no one can name.
ISO_4217 = frozenset(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN
    BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP
    ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK
    JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK
    MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN
    PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB
    TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG
    XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XUA YER ZAR ZMW ZWG ZWL
    """.split()  # noqa: SIM905 - a table to read, not a list to edit
)
NON_NEGATIVE_MONEY = ("cost", "sales", "cpc", "new_to_brand_sales")


class ContractError(ValueError):
    """A partition broke its table's contract; nothing of it was published."""


def _checks(column, schema: TableSchema) -> list[pa.Check]:
    checks: list[pa.Check] = []
    if column.kind is Kind.ID and column is not ACCOUNT_ID:
        checks.append(pa.Check.str_matches(ID_PATTERN))
    if column.name == "currency" or column.name.endswith("_currency"):
        checks.append(pa.Check.str_matches(CURRENCY_PATTERN))
        checks.append(pa.Check.isin(sorted(ISO_4217)))
    if column.kind in (Kind.COUNT, Kind.RATIO) or column.name in NON_NEGATIVE_MONEY:
        checks.append(pa.Check.ge(0))
    if column.enum:
        checks.append(pa.Check.isin(list(column.enum)))
    return checks


def contract(schema: TableSchema) -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            c.name: pa.Column(
                POLARS_TYPES[c.kind], checks=_checks(c, schema), nullable=not c.required
            )
            for c in schema.columns
        },
        unique=list(schema.natural_key),
        strict=True,
        name=schema.name,
    )


def validate(schema: TableSchema, frame: pl.DataFrame, partition: str) -> None:
    """Raise ContractError naming table, partition, column and the first offending values."""
    try:
        contract(schema).validate(frame, lazy=True)
    except pa.errors.SchemaErrors as errors:
        problems: dict[tuple[str, str], tuple[object, int]] = {}
        for case in errors.failure_cases.iter_rows(named=True):
            key = (str(case.get("column")), str(case.get("check")))
            first, count = problems.get(key, (case.get("failure_case"), 0))
            problems[key] = (first, count + 1)
        described = [
            f"column {column}: {check} failed {count}x, e.g. {_short(value)}"
            for (column, check), (value, count) in problems.items()
        ]
        raise ContractError(
            f"{schema.name} partition {partition} broke its contract: " + "; ".join(described)
        ) from None


def _short(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
