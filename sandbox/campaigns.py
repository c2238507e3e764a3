"""An account's portfolios and campaigns, and the optimizer configuration stored for a campaign.

Campaigns live in the advertising profiles (`connections.py`). Their records here are the base
records, before any change by people and programs: the campaigns as of the reference date add
the applied changes the log shows (`changes.Edits`). What does not depend on the day (metrics'
activity, the optimizer's choice, children's states) reads the base records, through the
`CampaignTable` of their integer codes.
"""

from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from sandbox.connections import of_type
from sandbox.hashing import Draws, scalar
from sandbox.reference import COUNTRY_BY_ID, created_at, ordinal, timestamp
from sandbox.spec import AD_PRODUCTS

SP, SB, SD = range(3)
STATES = ("ENABLED", "PAUSED", "ARCHIVED")
ENABLED, PAUSED, ARCHIVED = range(3)
_STATES = ("ENABLED", "ENABLED", "ENABLED", "ENABLED", "PAUSED", "PAUSED", "ARCHIVED")
# Ends and budget periods dated from the anchor reach beyond the last day of its quarter (a
# quarter has at most 92 days), so no reference date of the quarter sees them over.
BEYOND_QUARTER = timedelta(days=92)


def campaign_delivery(state: str) -> dict:
    """A campaign's delivery fields, which follow its state."""
    return {
        "deliveryStatus": "DELIVERING" if state == "ENABLED" else "NOT_DELIVERING",
        "deliveryReasons": [] if state == "ENABLED" else [f"CAMPAIGN_{state}"],
    }


def versioned(name: str, version: int) -> str:
    """An entity's name after `version` renames (the change log's `name` values)."""
    return name if version == 0 else f"{name} (rev. {version})"


def portfolios(draws: Draws, campaigns: int, anchor: date, history_days: int) -> list[dict]:
    """One portfolio per ten campaigns (at least two), each budget policy in turn."""
    count = max(2, campaigns // 10)
    policies = ("MONTHLY_RECURRING", "DATE_RANGE", "NO_CAP")
    rows = []
    for i in range(count):
        policy = policies[i % 3]
        rows.append(
            {
                "object": "portfolio",
                "id": draws.id_of("portfolio", i),
                "name": f"Portfolio {i}",
                "state": "ENABLED" if i % 5 else "PAUSED",
                "budget": {
                    "policy": policy,
                    "amount": None if policy == "NO_CAP" else 500 + 100 * (i % 7),
                    "startDate": str(anchor - timedelta(days=60))
                    if policy == "DATE_RANGE"
                    else None,
                    "endDate": str(anchor + BEYOND_QUARTER + timedelta(days=30))
                    if policy == "DATE_RANGE"
                    else None,
                },
                "createdAt": created_at(draws, "portfolio", i, anchor, history_days),
            }
        )
    return rows


def base_campaigns(
    draws: Draws,
    count: int,
    anchor: date,
    history_days: int,
    connections: list[dict],
    portfolios: list[dict],
) -> list[dict]:
    """The campaigns before any change by people and programs, spread over the ads profiles."""
    profiles = of_type(connections, "adv-profile")
    rows = []
    for i in range(count):
        u = draws.unit("campaign", i, "product")
        ad_product = "SP" if u < 0.6 else ("SB" if u < 0.8 else "SD")
        profile = profiles[scalar(draws.seed, "camp-profile", draws.index, i) % len(profiles)]
        country_id = profile["countries"][i % len(profile["countries"])]
        country = COUNTRY_BY_ID[country_id]
        start = anchor - timedelta(days=int(draws.unit("campaign", i, "start") * history_days))
        state = _STATES[scalar(draws.seed, draws.index, "campaign-state", i) % len(_STATES)]
        budget = (20 + 5 * (i % 30)) * (150 if country.currency == "JPY" else 1)
        record = {
            "object": "campaign",
            "id": draws.id_of("campaign", i),
            "adProduct": ad_product,
            "campaignId": str(10**12 + scalar(draws.seed, "cid", draws.index, i) % 10**12),
            "name": f"{ad_product} campaign {i}",
            "state": state,
            "connection": profile["id"],
            "country": country_id,
            "startDate": str(start),
            "endDate": None if i % 4 else str(anchor + BEYOND_QUARTER + timedelta(days=90)),
            **campaign_delivery(state),
            "budget": {"amount": budget, "currency": country.currency, "period": "DAILY"},
            "bidStrategy": ("LEGACY_FOR_SALES", "AUTO_FOR_SALES", "MANUAL")[i % 3],
            "portfolioId": portfolios[i % len(portfolios)]["id"] if i % 3 == 0 else None,
            "createdAt": timestamp(start - timedelta(days=1), i),
            "updatedAt": max(
                timestamp(anchor - timedelta(days=1 + i % 9), i),
                timestamp(start, i),
            ),
        }
        rows.append(record)
    return rows


def optimization_config(
    draws: Draws, campaign: dict, i: int, reference: date, anchor: date
) -> dict | None:
    """The optimizer configuration stored for the i-th campaign, if any (about a third of SP)."""
    if campaign["adProduct"] != "SP" or draws.unit("optcfg", i) > 0.45:
        return None
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
        "linkedWorkflowDefinitionIds": [draws.id_of("workflow", i % 3)] if i % 3 else [],
        "excludedWorkflowDefinitionIds": [],
        "workflowsOptOut": i % 7 == 0,
        "warmingModeUntil": None,
        # The last nightly run: "now", so it moves with the reference date.
        "optimizeDate": str(reference - timedelta(days=1)),
        # 60 to 89 days before the quarter's middle: the optimizer took over before the
        # metrics' usual windows start, and within them for some campaigns.
        "optimizingSince": str(anchor - timedelta(days=15 + i % 30)),
    }


@dataclass(frozen=True)
class CampaignTable:
    ad_product: np.ndarray  # index into AD_PRODUCTS
    state: np.ndarray  # index into STATES
    start: np.ndarray  # ordinal day of startDate
    exponent: np.ndarray  # currency digits


def campaign_table(base_campaigns: list[dict]) -> CampaignTable:
    """Built from the base records: the states children inherit and metrics' activity do not
    follow the day's changes, so a past day's figures stay what they were."""
    rows = base_campaigns
    return CampaignTable(
        ad_product=np.array([AD_PRODUCTS.index(c["adProduct"]) for c in rows], dtype=np.int64),
        state=np.array([STATES.index(c["state"]) for c in rows], dtype=np.int64),
        start=np.array([ordinal(date.fromisoformat(c["startDate"])) for c in rows]),
        exponent=np.array([COUNTRY_BY_ID[c["country"]].exponent for c in rows]),
    )
