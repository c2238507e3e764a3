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
-- even to the currency's digits, as the warehouse's money type; NULL on a zero or NULL
-- denominator. Computed in units of the money type's last digit ({money_unit} to 1).
CREATE OR REPLACE MACRO money_ratio(numerator, denominator, currency) AS
    CASE
        WHEN numerator IS NULL OR denominator IS NULL OR denominator = 0 THEN NULL
        ELSE CAST(
            CAST(
                sign(CAST(numerator * {money_unit} AS HUGEINT)) * sign(CAST(denominator AS HUGEINT))
                * half_even_div(
                    abs(CAST(numerator * {money_unit} AS HUGEINT)),
                    nullif(abs(CAST(denominator AS HUGEINT)), 0)
                    * CAST(10 ^ ({money_scale} - currency_digits(currency)) AS HUGEINT)
                )
                * CAST(10 ^ ({money_scale} - currency_digits(currency)) AS HUGEINT)
                AS DECIMAL(38, 0)
            ) * {money_last_digit}
            AS {money_type}
        )
    END;

COMMENT ON MACRO money_ratio IS
'Money / count as money of the currency (cpc = money_ratio(sum(cost), sum(clicks), currency)): computed on integers, rounded half to even to the currency''s digits as the service rounds cpc; NULL on a zero or NULL denominator.';

-- A text holding money (a change log's old and new values), as the warehouse's money type;
-- NULL when it holds none.
CREATE OR REPLACE MACRO try_money(value) AS try_cast(value AS {money_type});

COMMENT ON MACRO try_money IS
'A text as money of the warehouse''s type (DECIMAL of the registry''s precision and scale), or NULL when it is not a number.';

-- The values of economics_status (ECONOMICS_STATUSES of warehouse/spec.py, written here when the
-- file is loaded): the seller economics block reported; not yet, within its 48-72 hour lag;
-- never, past it.
CREATE OR REPLACE MACRO economics_available() AS '{economics_available}';
CREATE OR REPLACE MACRO economics_pending() AS '{economics_pending}';
CREATE OR REPLACE MACRO economics_missing() AS '{economics_missing}';

COMMENT ON MACRO economics_available IS
'economics_status of a seller product day whose economics were reported: its amounts count.';
COMMENT ON MACRO economics_pending IS
'economics_status of a day whose economics are not reported yet and less than 72 hours old: they may still arrive.';
COMMENT ON MACRO economics_missing IS
'economics_status of a day whose economics were never reported: past the lag, they will not come.';
