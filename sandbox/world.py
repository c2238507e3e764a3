"""The sandbox's accounts and their entities, generated from a seed, a preset and a reference date.

Entities (connections, products, campaigns, targets …) are built per account on first use and
kept as plain records in the spec's shape; `advertising.py` and `catalog.py` build the larger
kinds. The optimizer's changes and the change log are columnar tables (`optimizer.py`,
`changes.py`); metrics are never stored (see `metrics.py`).

Entity attributes (creation, start, end and update dates …) are dated from the account's anchor,
the first day of the reference date's quarter, not from the reference itself: daily snapshots
taken on consecutive reference dates of one quarter then see the same records, except what
really happened in between: the optimizer's nightly bids, and the campaign and ad-group changes
the change log shows (`changes.Edits`). Windows and "now" (metrics, optimization history, log
retention, the last optimizer run) stay on the reference date.
Secondary accounts, used to exercise agency keys, are always of the `small` size.
"""

from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property

import numpy as np

from sandbox import advertising, automation, catalog
from sandbox.changes import ChangeLog, Edits
from sandbox.hashing import hash_grid, make_id, scalar, uniform, unit
from sandbox.optimizer import OptimizerEvents
from sandbox.reference import COUNTRY_BY_ID, quarter_start, timestamp
from sandbox.restating import NO_RESTATING, Restating


@dataclass(frozen=True)
class Preset:
    """Sizes of one account's data."""

    name: str
    products: int
    campaigns: int
    targets: int
    history_days: int = 400


PRESETS = {
    "small": Preset("small", products=48, campaigns=16, targets=160),
    "medium": Preset("medium", products=500, campaigns=200, targets=5_000),
    "large": Preset("large", products=20_000, campaigns=2_000, targets=50_000),
}


# (type, name, country codes); the advertising profiles are where campaigns live.
_CONNECTIONS = (
    ("seller", "Seller Central NA", ("US",)),
    ("seller", "Seller Central EU", ("DE", "GB")),
    ("vendor", "Vendor Central JP", ("JP",)),
    ("adv-profile", "Ads profile US", ("US",)),
    ("adv-profile", "Ads profile EU", ("DE", "GB")),
    ("adv-profile", "Ads profile JP", ("JP",)),
    ("store_a", "Web store", ()),
)
_STATES = ("ENABLED", "ENABLED", "ENABLED", "ENABLED", "PAUSED", "PAUSED", "ARCHIVED")
# Ends and budget periods dated from the anchor reach beyond the last day of its quarter (a
# quarter has at most 92 days), so no reference date of the quarter sees them over.
BEYOND_QUARTER = timedelta(days=92)


def connection_specs(marketplaces: tuple[str, ...]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Today's connections, then a seller account and an ads profile per extra marketplace (a
    sandbox variant's, `variants.py`), so its products and campaigns sell in that currency."""
    extra = (
        (kind, f"{label} {code}", (code,))
        for code in marketplaces
        for kind, label in (("seller", "Seller Central"), ("adv-profile", "Ads profile"))
    )
    return (*_CONNECTIONS, *extra)


@dataclass
class Account:
    """One customer account and everything in it."""

    seed: int
    index: int
    name: str
    preset: Preset
    reference: date
    marketplaces: tuple[str, ...] = ()  # country codes beyond today's (a sandbox variant's)
    restating: Restating = NO_RESTATING  # recent days' figures revised (restating.py)
    _positions: dict[str, dict[str, int]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def id(self) -> str:
        return make_id(self.seed, "account", self.index)

    def locate(self, attribute: str, record_id: str | None) -> int | None:
        """Position of a record in one of the account's lists (`campaigns` …), by its id."""
        if attribute not in self._positions:
            records = getattr(self, attribute)
            self._positions[attribute] = {r["id"]: i for i, r in enumerate(records)}
        return self._positions[attribute].get(record_id)

    def id_of(self, kind: str, i: int) -> str:
        """The id of the i-th entity of a kind: records and columnar tables agree on it."""
        return make_id(self.seed, self.index, kind, int(i))

    @cached_property
    def anchor(self) -> date:
        """The first day of the reference date's quarter: what entity attributes are dated
        from, so that two reference dates of one quarter give the same records."""
        return quarter_start(self.reference)

    def _u(self, *parts: object) -> float:
        return unit(self.seed, self.index, *parts)

    def _created(self, kind: str, i: int) -> str:
        days = int(self._u(kind, i, "created") * (self.preset.history_days + 200)) + 30
        return timestamp(self.anchor - timedelta(days=days), scalar(kind, i))

    # ------------------------------------------------------------------ reference data
    @cached_property
    def connections(self) -> list[dict]:
        return [
            {
                "object": "connection",
                "id": self.id_of("connection", i),
                "type": kind,
                "name": name,
                "active": kind != "store_a" or self.index % 2 == 0,
                "countries": [make_id("country", code) for code in codes],
                "createdAt": self._created("connection", i),
            }
            for i, (kind, name, codes) in enumerate(connection_specs(self.marketplaces))
        ]

    def connections_of(self, kind: str) -> list[dict]:
        return [c for c in self.connections if c["type"] == kind]

    @cached_property
    def brands(self) -> list[dict]:
        names = ("Northwind", "Aster", "Kettle & Co", "Brightside", "Umbra", "Solace")
        return [
            {"object": "product_brand", "id": self.id_of("brand", i), "name": f"{n} {self.index}"}
            for i, n in enumerate(names)
        ]

    # ------------------------------------------------------------------ catalog
    @cached_property
    def products(self) -> list[dict]:
        sellers = self.connections_of("seller")
        vendor = self.connections_of("vendor")[0]
        rows = []
        for i in range(self.preset.products):
            is_vendor = self._u("product", i, "vendor") < 0.2
            connection = vendor if is_vendor else sellers[i % len(sellers)]
            countries = connection["countries"]
            country = countries[i // len(sellers) % len(countries)]
            asin = "B0" + format(scalar(self.seed, self.index, "asin", i) % 36**8, "08X")[:8]
            rows.append(
                {
                    "object": "product",
                    "id": self.id_of("product", i),
                    "asin": asin.upper().ljust(10, "0")[:10],
                    "sku": None if is_vendor else f"SKU-{self.index}-{i:05d}",
                    "title": f"Product {i} of account {self.index}",
                    "ean": None,
                    "upc": None,
                    "gtin": None,
                    "platform": "marketplace",
                    "type": "vendor" if is_vendor else "seller",
                    "active": self._u("product", i, "active") > 0.05,
                    "connection": connection["id"],
                    "country": country,
                    "brand": self.brands[i % len(self.brands)]["id"],
                    "createdAt": self._created("product", i),
                    "updatedAt": timestamp(self.anchor - timedelta(days=1 + i % 20), i),
                }
            )
        return rows

    @cached_property
    def products_by_country(self) -> dict[str, list[int]]:
        groups: dict[str, list[int]] = {}
        for i, p in enumerate(self.products):
            groups.setdefault(p["country"], []).append(i)
        return groups

    # ------------------------------------------------------------------ advertising
    @cached_property
    def portfolios(self) -> list[dict]:
        count = max(2, self.preset.campaigns // 10)
        policies = ("MONTHLY_RECURRING", "DATE_RANGE", "NO_CAP")
        rows = []
        for i in range(count):
            policy = policies[i % 3]
            rows.append(
                {
                    "object": "portfolio",
                    "id": self.id_of("portfolio", i),
                    "name": f"Portfolio {i}",
                    "state": "ENABLED" if i % 5 else "PAUSED",
                    "budget": {
                        "policy": policy,
                        "amount": None if policy == "NO_CAP" else 500 + 100 * (i % 7),
                        "startDate": str(self.anchor - timedelta(days=60))
                        if policy == "DATE_RANGE"
                        else None,
                        "endDate": str(self.anchor + BEYOND_QUARTER + timedelta(days=30))
                        if policy == "DATE_RANGE"
                        else None,
                    },
                    "createdAt": self._created("portfolio", i),
                }
            )
        return rows

    @cached_property
    def campaigns(self) -> list[dict]:
        """The campaigns as of the reference date: their base records with every applied
        change the log shows up to the day before (state, budget, name, updatedAt)."""
        return [self.edits.campaign(self, c, r) for c, r in enumerate(self.base_campaigns)]

    @cached_property
    def base_campaigns(self) -> list[dict]:
        """The campaigns before any change by people and programs: what does not depend on
        the day (metrics' activity, the optimizer's choice, children's states) reads these."""
        profiles = self.connections_of("adv-profile")
        rows = []
        for i in range(self.preset.campaigns):
            u = self._u("campaign", i, "product")
            ad_product = "SP" if u < 0.6 else ("SB" if u < 0.8 else "SD")
            profile = profiles[scalar(self.seed, "camp-profile", self.index, i) % len(profiles)]
            country_id = profile["countries"][i % len(profile["countries"])]
            country = COUNTRY_BY_ID[country_id]
            start = self.anchor - timedelta(
                days=int(self._u("campaign", i, "start") * self.preset.history_days)
            )
            state = _STATES[scalar(self.seed, self.index, "campaign-state", i) % len(_STATES)]
            budget = (20 + 5 * (i % 30)) * (150 if country.currency == "JPY" else 1)
            record = {
                "object": "campaign",
                "id": self.id_of("campaign", i),
                "adProduct": ad_product,
                "campaignId": str(10**12 + scalar(self.seed, "cid", self.index, i) % 10**12),
                "name": f"{ad_product} campaign {i}",
                "state": state,
                "connection": profile["id"],
                "country": country_id,
                "startDate": str(start),
                "endDate": None
                if i % 4
                else str(self.anchor + BEYOND_QUARTER + timedelta(days=90)),
                **advertising.campaign_delivery(state),
                "budget": {"amount": budget, "currency": country.currency, "period": "DAILY"},
                "bidStrategy": ("LEGACY_FOR_SALES", "AUTO_FOR_SALES", "MANUAL")[i % 3],
                "portfolioId": self.portfolios[i % len(self.portfolios)]["id"]
                if i % 3 == 0
                else None,
                "createdAt": timestamp(start - timedelta(days=1), i),
                "updatedAt": max(
                    timestamp(self.anchor - timedelta(days=1 + i % 9), i),
                    timestamp(start, i),
                ),
            }
            rows.append(record)
        return rows

    def optimization_config(self, campaign_index: int) -> dict | None:
        """The optimizer configuration stored for a campaign, if any (about a third of SP)."""
        campaign = self.base_campaigns[campaign_index]
        if campaign["adProduct"] != "SP" or self._u("optcfg", campaign_index) > 0.45:
            return None
        i = campaign_index
        objective = ("ACOS", "ROAS", "IMPRESSIONS", "ORDERS")[i % 4]
        yen = COUNTRY_BY_ID[campaign["country"]].exponent == 0

        def local(value: float) -> float:
            """Limits are in the campaign's currency: a hundredfold in yen."""
            return round(value * 100) if yen else value

        return {
            "aiEnabled": i % 2 == 0,
            "objective": {
                "type": objective,
                "value": {"ACOS": 0.25, "ROAS": 4.0}.get(objective, 1000),
                "maxAcosPct": 35 if objective in ("IMPRESSIONS", "ORDERS") else None,
            },
            "limits": {
                "minBid": local(0.2),
                "maxBid": local(3.5),
                "placementCapPercent": 150,
                "minSpendBeforeNegative": local(15),
            },
            "budget": {"dailyBudget": local(40), "monthlyBudget": local(1200)},
            "harvesting": {
                "discoveryLevel": ("low", "medium", "high")[i % 3],
                "competitorAsinTargeting": i % 3 == 0,
                "crossCampaign": {
                    "enabled": i % 2 == 1,
                    "harvestGroupKey": f"group-{i % 4}",
                    "role": ("source", "destination")[i % 2],
                },
            },
            "linkedWorkflowDefinitionIds": [self.id_of("workflow", i % 3)] if i % 3 else [],
            "excludedWorkflowDefinitionIds": [],
            "workflowsOptOut": i % 7 == 0,
            "warmingModeUntil": None,
            # The last nightly run: "now", so it moves with the reference date.
            "optimizeDate": str(self.reference - timedelta(days=1)),
            # 60 to 89 days before the quarter's middle: the optimizer took over before the
            # metrics' usual windows start, and within them for some campaigns.
            "optimizingSince": str(self.anchor - timedelta(days=15 + i % 30)),
        }

    def campaign_currency(self, campaign_index: int) -> str:
        return COUNTRY_BY_ID[self.base_campaigns[campaign_index]["country"]].currency

    # ------------------------------------------------------------------ bulk attributes
    def columns(self, kind: str, count: int, size: int) -> list[np.ndarray]:
        """`count` independent uniform columns over `size` entities of a kind.

        Drawing a column at a time keeps the `large` preset's tens of thousands of records fast
        to build; each value still depends only on (seed, account, kind, column, entity).
        """
        entities = np.arange(size)
        return [
            uniform(self.seed, scalar(self.index, kind, k) % 2**31, entities, self.index)
            for k in range(count)
        ]

    def bits(self, kind: str, size: int) -> np.ndarray:
        """One 64-bit hash per entity of a kind, for picking words and codes."""
        return hash_grid(self.seed, scalar(self.index, kind) % 2**31, np.arange(size), self.index)

    # ------------------------------------------------------------------ advertising entities
    @cached_property
    def campaign_table(self) -> advertising.CampaignTable:
        return advertising.campaign_table(self)

    @cached_property
    def adgroup_table(self) -> advertising.AdGroupTable:
        return advertising.adgroup_table(self)

    @cached_property
    def adgroups(self) -> list[dict]:
        """The ad groups as of the reference date (`changes.Edits`, as campaigns)."""
        return [self.edits.adgroup(self, j, r) for j, r in enumerate(self.base_adgroups)]

    @cached_property
    def base_adgroups(self) -> list[dict]:
        return advertising.adgroups(self)

    @cached_property
    def target_table(self) -> advertising.TargetTable:
        return advertising.target_table(self)

    @cached_property
    def targets(self) -> list[dict]:
        return advertising.targets(self)

    @cached_property
    def product_ad_table(self) -> advertising.ProductAdTable:
        return advertising.product_ad_table(self)

    @cached_property
    def product_ads(self) -> list[dict]:
        return advertising.product_ads(self)

    @cached_property
    def search_term_table(self) -> advertising.SearchTermTable:
        return advertising.search_term_table(self)

    @cached_property
    def search_terms(self) -> list[dict]:
        return advertising.search_terms(self)

    @cached_property
    def optimizer(self) -> OptimizerEvents:
        """Every change the optimizer sent for this account's campaigns."""
        return OptimizerEvents.build(self)

    @cached_property
    def edits(self) -> Edits:
        """Campaign and ad-group changes by people and programs, on absolute days."""
        return Edits.build(self)

    @cached_property
    def change_log(self) -> ChangeLog:
        return ChangeLog.build(self)

    # ------------------------------------------------------------------ marketplace catalog
    @cached_property
    def product_table(self) -> catalog.ProductTable:
        return catalog.product_table(self)

    @cached_property
    def seller_products(self) -> list[dict]:
        return catalog.seller_products(self)

    @cached_property
    def vendor_products(self) -> list[dict]:
        return catalog.vendor_products(self)

    @cached_property
    def advertising_products(self) -> list[dict]:
        return catalog.advertising_products(self)

    @cached_property
    def cluster_index(self) -> catalog.ClusterIndex:
        return catalog.cluster_index(self)

    @cached_property
    def clusters(self) -> list[dict]:
        return catalog.clusters(self)

    # ------------------------------------------------------------------ automation
    @cached_property
    def workflows(self) -> list[dict]:
        return automation.workflow_records(self)

    @cached_property
    def workflow_members(self) -> dict[int, list[int]]:
        return automation.workflow_members(self)

    @cached_property
    def _tasks_and_items(self) -> tuple[list[dict], list[dict]]:
        return automation.task_records(self)

    @property
    def tasks(self) -> list[dict]:
        return self._tasks_and_items[0]

    @property
    def task_items(self) -> list[dict]:
        return self._tasks_and_items[1]

    @cached_property
    def platform_changes(self) -> list[dict]:
        return automation.store_changes(self)
