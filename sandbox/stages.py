"""What an account is made of: the records of its stages, in the order `assembly.py` builds them.

Each stage is an immutable record of plain fields, built once from the account's identity and
the stages before it. The records here hold what several readers share (the tables metrics, the
optimizer and the change log read); a stage with a single list (a kind of listing, the
clusters, the campaigns and ad groups as of the reference date, the targets …) is that list,
and a stage with a single table or log is that record (`advertising.ProductAdTable`,
`optimizer.OptimizerEvents`, `changes.Edits`, `changes.ChangeLog`).
"""

from dataclasses import dataclass

from sandbox.advertising import AdGroupTable, SearchTermTable, TargetTable
from sandbox.campaigns import CampaignTable
from sandbox.catalog import ClusterIndex, ProductTable
from sandbox.optimizer import Managed


@dataclass(frozen=True)
class Directory:
    """What the catalog and the campaigns hang from: connections, and the brands products
    carry."""

    connections: list[dict]
    brands: list[dict]


@dataclass(frozen=True)
class Catalog:
    """The catalog's products, what listings and metrics know of each, and their clusters."""

    products: list[dict]
    by_country: dict[str, list[int]]  # product positions per country id
    table: ProductTable
    cluster_index: ClusterIndex


@dataclass(frozen=True)
class Structure:
    """Portfolios and campaigns before any change by people and programs (what does not depend
    on the reference date within its quarter), their optimizer configurations, and which
    campaigns the optimizer manages."""

    portfolios: list[dict]
    base_campaigns: list[dict]
    configs: list[dict | None]  # per campaign: its optimizer configuration, if any
    campaign_table: CampaignTable
    managed: Managed


@dataclass(frozen=True)
class Tree:
    """What hangs beneath the campaigns, as tables of integer links and codes: ad groups,
    targets and search terms. (The ad groups' base records are a stage of their own: the
    campaigns' records, the optimizer and the edits do without them.)"""

    adgroup_table: AdGroupTable
    target_table: TargetTable
    search_term_table: SearchTermTable


@dataclass(frozen=True)
class Workflows:
    """The account's workflows, and the campaigns each processes (positions)."""

    records: list[dict]
    members: dict[int, list[int]]


@dataclass(frozen=True)
class Tasks:
    """Tasks and their items (the suggestions)."""

    tasks: list[dict]
    items: list[dict]
