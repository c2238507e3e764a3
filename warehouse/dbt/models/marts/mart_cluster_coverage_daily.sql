-- The account's seller and product-ad figures per day and currency split in two parts that add
-- up exactly to the account total: the products in at least one cluster, each counted once
-- ('clustered, de-duplicated'), and the rest ('unclustered': in no cluster, or no catalog
-- product).
WITH clustered AS (
    SELECT DISTINCT account_id, product
    FROM {{ source('lake', 'cluster_products') }}
),
summed AS (
    -- A non-NULL product is one row of its account, day and currency; rows without a catalog
    -- product (product NULL) are unclustered and counted in rows, not in products.
    SELECT
        d.account_id,
        d.date,
        d.currency,
        CASE
            WHEN k.product IS NULL THEN 'unclustered'
            ELSE 'clustered, de-duplicated'
        END AS scope,
        count(d.product) FILTER (WHERE d.seller_rows > 0) AS seller_products,
        CAST(sum(d.seller_rows) AS BIGINT) AS seller_rows,
        count(d.product) FILTER (WHERE d.product_ad_rows > 0) AS advertised_products,
        CAST(sum(d.product_ad_rows) AS BIGINT) AS product_ad_rows,
        {{ seller_sums('d.', summed=true) }},
        {{ ad_sums('d.', summed=true) }}
    FROM {{ ref('int_product_daily') }} AS d
    LEFT JOIN clustered AS k ON k.account_id = d.account_id AND k.product = d.product
    GROUP BY ALL
)
SELECT
    account_id,
    date,
    currency,
    scope,
    seller_products,
    seller_rows,
    advertised_products,
    product_ad_rows,
    {{ product_figures(buy_box=false) }}
FROM summed
