-- Functions every mart uses, kept in warehouse.duckdb for analysts' own queries too. They are
-- created when the tables are loaded, before the marts (warehouse/dbt) are built.

-- A ratio as a fraction: NULL when the denominator is 0 or NULL (never 0, never infinite).
CREATE OR REPLACE MACRO safe_ratio(numerator, denominator) AS
    CASE
        WHEN numerator IS NULL OR denominator IS NULL OR denominator = 0 THEN NULL
        ELSE CAST(numerator AS DOUBLE) / nullif(CAST(denominator AS DOUBLE), 0)
    END;

COMMENT ON MACRO safe_ratio IS
'numerator / denominator as a DOUBLE fraction; NULL when the denominator is 0 or NULL. Use it on sums (safe_ratio(sum(cost), sum(sales))): ratios are recomputed from sums, never averaged.';

-- Digits after the decimal point of a currency's amounts (ISO 4217 minor units), written from
-- CURRENCY_DIGITS of warehouse/spec.py when the file is loaded. A simple
-- CASE, not IN lists: DuckDB plans long IN lists as joins, one per use of the macro, and the
-- marts use it many times per row.
CREATE OR REPLACE MACRO currency_digits(currency) AS
    CASE currency
{currency_digits}
        ELSE {default_digits}
    END;

COMMENT ON MACRO currency_digits IS
'Digits after the decimal point of the currency''s amounts: 0 for JPY (and other zero-digit currencies), 3 for BHD, KWD …, 2 otherwise.';

-- Integer division rounded half to even, for n >= 0 and d > 0.
CREATE OR REPLACE MACRO half_even_div(n, d) AS
    n // d + CASE
        WHEN 2 * (n % d) > d OR (2 * (n % d) = d AND (n // d) % 2 = 1) THEN 1
        ELSE 0
    END;

COMMENT ON MACRO half_even_div IS
'n // d rounded half to even (n >= 0, d > 0, integers): the building block of money_ratio.';

-- Money divided by a count (cpc = cost / clicks) as the service sends it: exact, rounded half to
-- even to the currency's digits, DECIMAL(18,4); NULL on a zero or NULL denominator.
CREATE OR REPLACE MACRO money_ratio(numerator, denominator, currency) AS
    CASE
        WHEN numerator IS NULL OR denominator IS NULL OR denominator = 0 THEN NULL
        ELSE CAST(
            CAST(
                sign(CAST(numerator * 10000 AS HUGEINT)) * sign(CAST(denominator AS HUGEINT))
                * half_even_div(
                    abs(CAST(numerator * 10000 AS HUGEINT)),
                    nullif(abs(CAST(denominator AS HUGEINT)), 0)
                    * CAST(10 ^ (4 - currency_digits(currency)) AS HUGEINT)
                )
                * CAST(10 ^ (4 - currency_digits(currency)) AS HUGEINT)
                AS DECIMAL(38, 0)
            ) * CAST(0.0001 AS DECIMAL(5, 4))
            AS DECIMAL(18, 4)
        )
    END;

COMMENT ON MACRO money_ratio IS
'Money / count as money of the currency (cpc = money_ratio(sum(cost), sum(clicks), currency)): computed on integers, rounded half to even to the currency''s digits as the service rounds cpc; NULL on a zero or NULL denominator.';
