-- Seller and product-ad figures per keyword cluster, day and currency. A product in several
-- clusters counts in full in each one, so these rows overlap and do not add up to the account:
-- mart_cluster_coverage_daily has the de-duplicated clustered total and the unclustered rest.
WITH members AS (
    SELECT DISTINCT account_id, cluster, product
    FROM {{ source('lake', 'cluster_products') }}
),
joined AS (
    SELECT
        m.account_id,
        m.cluster,
        d.date,
        d.currency,
        count(*) FILTER (WHERE d.seller_rows > 0) AS seller_products,
        count(*) FILTER (WHERE d.product_ad_rows > 0) AS advertised_products,
        {{ seller_sums('d.', summed=true) }},
        {{ ad_sums('d.', summed=true) }}
    FROM {{ ref('int_product_daily') }} AS d
    JOIN members AS m ON m.account_id = d.account_id AND m.product = d.product
    GROUP BY m.account_id, m.cluster, d.date, d.currency
)
SELECT
    j.account_id,
    j.cluster,
    c.name AS cluster_name,
    j.date,
    j.currency,
    j.seller_products,
    j.advertised_products,
    {{ product_figures('j.') }}
FROM joined AS j
LEFT JOIN {{ source('lake', 'clusters') }} AS c ON c.account_id = j.account_id AND c.id = j.cluster
