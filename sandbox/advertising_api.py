"""The advertising reads (spec 4.5): portfolios, campaigns (with their optimizer configuration
on `expand=optimizationConfig`, spec 2.2), ad groups, targets, product ads and search terms.
Their history and change log are `history_api.py` and `changes_api.py`, their metrics
`metrics_api.py`.

Records
- portfolio: object "portfolio", id, name, state, budget {policy, amount (null for NO_CAP),
  startDate, endDate (DATE_RANGE only)}, createdAt; list filters: `search` over name, `state`;
- campaign `deliveryStatus` is DELIVERING or NOT_DELIVERING, `deliveryReasons` CAMPAIGN_PAUSED or
  CAMPAIGN_ARCHIVED; objective `type` is ACOS, ROAS, IMPRESSIONS or ORDERS;
- ad group: object "adgroup", id, adGroupId, name, campaign, adProduct, connection, country,
  state, defaultBid (number, null for SB), createdAt, updatedAt. Filters campaign, adProduct,
  connection, country, state; `search` over name;
- target: object "target", id, targetId, adProduct, campaign, adGroup, connection, country,
  state, targetType, negative, the definition fields of spec 2.5 (keywordText, matchType, asin,
  productMatchType, category, themeMatchType, event, lookback, audienceId, contentCategoryId,
  locationId; null where the type has none), expression (the definition, readable), bid (number;
  null for negative targets; for targets under the optimizer, the bid after its last change),
  createdAt, updatedAt. Filters campaign, adGroup, targetType, adProduct, connection, country,
  state; `search` over keywordText and expression;
- product ad: adType "PRODUCT_AD"; deliveryReasons name each level that stops it
  (CAMPAIGN_PAUSED, AD_GROUP_ARCHIVED, AD_PAUSED …); sku is null for vendor products;
- search term: object "search_term", id, searchTerm (what the shopper typed), adProduct (SP or
  SB), campaign, adGroup, target, connection, country, targetType and matchType (the target's),
  createdAt. Filters connection, country, campaign, adGroup, target; `search` over searchTerm;
"""

from sandbox.errors import not_found
from sandbox.expand import expand_item, expand_page
from sandbox.listing import cursor_page, filter_records
from sandbox.routing import CAMPAIGNS, Context, listing, route


def campaigns(ctx: Context) -> dict:
    account = ctx.account
    records = filter_records(account.campaigns, ctx.query)
    page = cursor_page(records, ctx.query)
    if "optimizationConfig" in ctx.query.all("expand"):
        page["data"] = [
            {
                **r,
                "optimizationConfig": account.optimization_config(
                    account.locate("campaigns", r["id"])
                ),
            }
            for r in page["data"]
        ]
    return expand_page(account, ctx.query, page)  # spec 2.1, 4.1


def campaign(ctx: Context) -> dict:
    position = ctx.account.locate("campaigns", ctx.params["id"])
    if position is None:
        raise not_found("campaign")
    record = ctx.account.campaigns[position]
    if "optimizationConfig" in ctx.query.all("expand"):
        record = {**record, "optimizationConfig": ctx.account.optimization_config(position)}
    return expand_item(ctx.account, ctx.query, record)  # spec 2.1, 4.1


ROUTES = (
    *listing(r"/v1/portfolios", "portfolios", CAMPAIGNS),
    route(r"/v1/campaigns", campaigns, CAMPAIGNS),
    route(r"/v1/campaigns/(?P<id>[^/]+)", campaign, CAMPAIGNS),
    *listing(r"/v1/adgroups", "adgroups", CAMPAIGNS),
    *listing(r"/v1/targets", "targets", CAMPAIGNS, search=("keywordText", "expression")),
    *listing(r"/v1/product-ads", "product_ads", CAMPAIGNS, search=("asin", "sku")),
    *listing(r"/v1/search-terms", "search_terms", CAMPAIGNS, search=("searchTerm",)),
)
