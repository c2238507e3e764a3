"""An account, assembled: who it is, and its data built in stages, in one order.

`assemble` is the one place that knows how an account's data fits together. It wires every
stage to the stages it is built from, in the order of generation:

    stage          holds                                   built from
    directory      connections, brands                     (the account's identity)
    catalog        products, their attributes, clusters    directory
    listings       seller, vendor, advertising (three)     directory, catalog
    clusters       the clusters' records                   catalog
    structure      portfolios, base campaigns, their       directory
                   optimizer configurations, which ones
                   the optimizer manages
    tree           ad group, target and search-term        structure
                   tables
    base ad groups the ad groups' base records             structure, tree
    optimizer      every change the nightly runs sent      structure, tree
    edits          campaign and ad-group changes by        structure, tree, optimizer
                   people and programs
    campaigns      as of the reference date                structure, edits
    ad groups      as of the reference date                structure, tree, base ad
                                                           groups, edits
    targets        with the optimizer's bids               structure, tree, base ad
                                                           groups, optimizer
    search terms                                           tree, targets
    product-ad     product ads' links to ad groups and     catalog, structure, tree
    table          catalog products
    product ads    as of the reference date                catalog, product-ad table,
                                                           campaigns, ad groups
    change log     every logged change                     structure, base ad groups,
                                                           tree, optimizer, edits,
                                                           campaigns, product-ad table
    workflows      workflows and their campaigns           structure
    tasks          tasks and their items                   catalog, structure, tree,
                                                           base ad groups, edits,
                                                           targets, search terms,
                                                           product ads
    store changes  the stores' change log                  directory
    populations    one per metrics resource                the stages its rows read

A stage is built on first use, after its inputs, and kept (`Later`): a request pays only for
what it reads, so the first page of a `large` account's products builds its catalog, not its
50,000 targets. Builders (`connections.py`, `catalog.py`, `listings.py`, `campaigns.py`,
`advertising.py`, `optimizer.py`, `changes.py`, `automation.py`, `populations.py`) are plain
functions of what they need, never of the account; what a stage holds is in `stages.py`.
Metrics are never stored (`metrics.py`).

Entity attributes (creation, start, end and update dates …) are dated from the account's anchor,
the first day of the reference date's quarter, not from the reference itself: daily snapshots
taken on consecutive reference dates of one quarter then see the same records, except what
really happened in between: the optimizer's nightly bids, and the campaign and ad-group changes
the change log shows (`changes.Edits`). Windows and "now" (metrics, optimization history, log
retention, the last optimizer run) stay on the reference date. Secondary accounts, used to
exercise agency keys, are always of the `small` size (`service.py`).
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Generic, TypeVar, cast

from sandbox import (
    advertising,
    automation,
    campaigns,
    catalog,
    connections,
    listings,
    optimizer,
    populations,
)
from sandbox.advertising import ProductAdTable
from sandbox.changes import ChangeLog, Edits, Names, actors
from sandbox.hashing import Draws, make_id
from sandbox.metrics import Population
from sandbox.optimizer import OptimizerEvents
from sandbox.reference import quarter_start
from sandbox.restating import NO_RESTATING, Restating
from sandbox.stages import (
    Catalog,
    Directory,
    Structure,
    Tasks,
    Tree,
    Workflows,
)

T = TypeVar("T")
_UNBUILT = object()


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
# The account's lists served by cursor lists, by name: `Account.records`, `Account.locate`.
LISTS = (
    "connections",
    "brands",
    "products",
    "seller_products",
    "vendor_products",
    "advertising_products",
    "clusters",
    "portfolios",
    "campaigns",
    "adgroups",
    "targets",
    "product_ads",
    "search_terms",
    "workflows",
    "tasks",
    "task_items",
)


class Later(Generic[T]):
    """A stage: `build(*inputs)` on first use, each input that is itself `Later` built first,
    in the order given; then kept. Built once, even when two threads ask at the same time."""

    __slots__ = ("_build", "_inputs", "_lock", "_value")

    def __init__(self, build: Callable[..., T], *inputs: object) -> None:
        self._build = build
        self._inputs = inputs
        self._lock = threading.Lock()
        self._value: object = _UNBUILT

    def get(self) -> T:
        if self._value is _UNBUILT:
            with self._lock:
                if self._value is _UNBUILT:
                    values = [i.get() if isinstance(i, Later) else i for i in self._inputs]
                    self._value = self._build(*values)
        return cast(T, self._value)


@dataclass(frozen=True)
class Stages:
    """An account's stages, in the order `assemble` wires them."""

    directory: Later[Directory]
    catalog: Later[Catalog]
    seller_products: Later[list[dict]]
    vendor_products: Later[list[dict]]
    advertising_products: Later[list[dict]]
    clusters: Later[list[dict]]
    structure: Later[Structure]
    tree: Later[Tree]
    base_adgroups: Later[list[dict]]
    optimizer: Later[OptimizerEvents]
    edits: Later[Edits]
    campaigns: Later[list[dict]]
    adgroups: Later[list[dict]]
    targets: Later[list[dict]]
    search_terms: Later[list[dict]]
    product_ad_table: Later[ProductAdTable]
    product_ads: Later[list[dict]]
    change_log: Later[ChangeLog]
    workflows: Later[Workflows]
    tasks: Later[Tasks]
    platform_changes: Later[list[dict]]
    populations: dict[str, Later[Population]]  # per metrics resource


@dataclass(frozen=True, eq=False)
class Account:
    """One customer account: who it is, and its data, read from its stages (`assemble`)."""

    seed: int
    index: int
    name: str
    preset: Preset
    reference: date
    marketplaces: tuple[str, ...]  # country codes beyond today's (a sandbox variant's)
    restating: Restating  # recent days' figures revised (restating.py)
    stages: Stages = field(repr=False)
    _positions: dict[str, dict[str, int]] = field(default_factory=dict, init=False, repr=False)

    @property
    def id(self) -> str:
        return make_id(self.seed, "account", self.index)

    @property
    def anchor(self) -> date:
        """The first day of the reference date's quarter: what entity attributes are dated
        from, so that two reference dates of one quarter give the same records."""
        return quarter_start(self.reference)

    @property
    def draws(self) -> Draws:
        return Draws(self.seed, self.index)

    # ------------------------------------------------------------------ stages
    @property
    def directory(self) -> Directory:
        return self.stages.directory.get()

    @property
    def catalog(self) -> Catalog:
        return self.stages.catalog.get()

    @property
    def structure(self) -> Structure:
        return self.stages.structure.get()

    @property
    def tree(self) -> Tree:
        return self.stages.tree.get()

    @property
    def base_adgroups(self) -> list[dict]:
        """The ad groups before any change by people and programs."""
        return self.stages.base_adgroups.get()

    @property
    def optimizer(self) -> OptimizerEvents:
        """Every change the optimizer sent for this account's campaigns."""
        return self.stages.optimizer.get()

    @property
    def edits(self) -> Edits:
        """Campaign and ad-group changes by people and programs, on absolute days."""
        return self.stages.edits.get()

    @property
    def change_log(self) -> ChangeLog:
        return self.stages.change_log.get()

    def population(self, resource: str) -> Population:
        """What a metrics resource reports on (`populations.py`)."""
        return self.stages.populations[resource].get()

    def optimization_config(self, campaign: int) -> dict | None:
        """The optimizer configuration stored for a campaign (a position), if any."""
        return self.structure.configs[campaign]

    # ------------------------------------------------------------------ lists
    def records(self, name: str) -> list[dict]:
        """One of the account's lists by name (`LISTS`)."""
        if name not in LISTS:
            raise KeyError(name)
        return getattr(self, name)

    def locate(self, name: str, record_id: str | None) -> int | None:
        """Position of a record in one of the account's lists (`LISTS`), by its id."""
        if name not in self._positions:
            self._positions[name] = {r["id"]: i for i, r in enumerate(self.records(name))}
        return self._positions[name].get(record_id)

    @property
    def connections(self) -> list[dict]:
        return self.directory.connections

    @property
    def brands(self) -> list[dict]:
        return self.directory.brands

    @property
    def products(self) -> list[dict]:
        return self.catalog.products

    @property
    def seller_products(self) -> list[dict]:
        return self.stages.seller_products.get()

    @property
    def vendor_products(self) -> list[dict]:
        return self.stages.vendor_products.get()

    @property
    def advertising_products(self) -> list[dict]:
        return self.stages.advertising_products.get()

    @property
    def clusters(self) -> list[dict]:
        return self.stages.clusters.get()

    @property
    def portfolios(self) -> list[dict]:
        return self.structure.portfolios

    @property
    def campaigns(self) -> list[dict]:
        """The campaigns as of the reference date: their base records with every applied
        change the log shows up to the day before (state, budget, name, updatedAt)."""
        return self.stages.campaigns.get()

    @property
    def adgroups(self) -> list[dict]:
        """The ad groups as of the reference date (as campaigns)."""
        return self.stages.adgroups.get()

    @property
    def targets(self) -> list[dict]:
        return self.stages.targets.get()

    @property
    def product_ads(self) -> list[dict]:
        return self.stages.product_ads.get()

    @property
    def search_terms(self) -> list[dict]:
        return self.stages.search_terms.get()

    @property
    def workflows(self) -> list[dict]:
        return self.stages.workflows.get().records

    @property
    def workflow_members(self) -> dict[int, list[int]]:
        """Campaign positions each workflow processes."""
        return self.stages.workflows.get().members

    @property
    def tasks(self) -> list[dict]:
        return self.stages.tasks.get().tasks

    @property
    def task_items(self) -> list[dict]:
        return self.stages.tasks.get().items

    @property
    def platform_changes(self) -> list[dict]:
        return self.stages.platform_changes.get()


def assemble(
    seed: int,
    index: int,
    name: str,
    preset: Preset,
    reference: date,
    marketplaces: tuple[str, ...] = (),
    restating: Restating = NO_RESTATING,
) -> Account:
    """The account `index` of the world of `seed`, as of `reference`: every stage wired to its
    inputs, in the order they are built (the module docstring); none built yet."""
    draws = Draws(seed, index)
    anchor = quarter_start(reference)
    directory = Later(_directory, draws, anchor, preset, marketplaces)
    catalog = Later(_catalog, draws, anchor, preset, directory)
    seller_products = Later(_seller_products, draws, catalog)
    vendor_products = Later(_vendor_products, draws, catalog)
    advertising_products = Later(_advertising_products, draws, directory, catalog)
    clusters = Later(_clusters, draws, anchor, catalog)
    structure = Later(_structure, draws, anchor, reference, preset, directory)
    tree = Later(_tree, draws, anchor, preset, structure)
    base_adgroups = Later(_base_adgroups, draws, anchor, structure, tree)
    optimizer = Later(_optimizer, seed, reference, structure, tree)
    edits = Later(_edits, draws, reference, structure, tree, optimizer)
    campaigns = Later(_campaigns, structure, edits)
    adgroups = Later(_adgroups, structure, tree, base_adgroups, edits)
    targets = Later(_targets, draws, anchor, structure, tree, base_adgroups, optimizer)
    search_terms = Later(_search_terms, draws, tree, targets)
    product_ad_table = Later(_product_ad_table, draws, catalog, structure, tree)
    product_ads = Later(_product_ads, draws, anchor, catalog, product_ad_table, campaigns, adgroups)
    change_log = Later(
        _change_log,
        draws,
        reference,
        structure,
        base_adgroups,
        tree,
        optimizer,
        edits,
        campaigns,
        product_ad_table,
    )
    workflows = Later(_workflows, draws, name, anchor, structure)
    tasks = Later(
        _tasks,
        draws,
        anchor,
        catalog,
        structure,
        tree,
        base_adgroups,
        edits,
        targets,
        search_terms,
        product_ads,
    )
    platform_changes = Later(_platform_changes, draws, name, reference, directory)
    metrics = {
        "campaign-metrics": Later(populations.campaign_population, draws, restating, structure),
        "adgroup-metrics": Later(
            populations.adgroup_population, draws, restating, structure, tree, base_adgroups
        ),
        "target-metrics": Later(
            populations.target_population, draws, restating, structure, tree, targets
        ),
        "product-ad-metrics": Later(
            populations.product_ad_population,
            draws,
            restating,
            structure,
            tree,
            catalog,
            product_ad_table,
            product_ads,
        ),
        "search-term-metrics": Later(
            populations.search_term_population, draws, restating, structure, tree, search_terms
        ),
        "seller-product-metrics": Later(
            populations.seller_population, draws, restating, catalog, seller_products
        ),
        "vendor-product-metrics": Later(
            populations.vendor_population, draws, restating, catalog, vendor_products
        ),
    }
    stages = Stages(
        directory,
        catalog,
        seller_products,
        vendor_products,
        advertising_products,
        clusters,
        structure,
        tree,
        base_adgroups,
        optimizer,
        edits,
        campaigns,
        adgroups,
        targets,
        search_terms,
        product_ad_table,
        product_ads,
        change_log,
        workflows,
        tasks,
        platform_changes,
        metrics,
    )
    return Account(seed, index, name, preset, reference, marketplaces, restating, stages)


# ---------------------------------------------------------------------- the stages
def _directory(
    draws: Draws, anchor: date, preset: Preset, marketplaces: tuple[str, ...]
) -> Directory:
    return Directory(
        connections=connections.connections(draws, anchor, preset.history_days, marketplaces),
        brands=catalog.brands(draws),
    )


def _catalog(draws: Draws, anchor: date, preset: Preset, directory: Directory) -> Catalog:
    products = catalog.products(
        draws,
        preset.products,
        anchor,
        preset.history_days,
        directory.connections,
        directory.brands,
    )
    return Catalog(
        products=products,
        by_country=catalog.by_country(products),
        table=catalog.product_table(draws, products),
        cluster_index=catalog.cluster_index(draws, len(products)),
    )


def _seller_products(draws: Draws, shelf: Catalog) -> list[dict]:
    return listings.seller_products(draws, shelf.products, shelf.table)


def _vendor_products(draws: Draws, shelf: Catalog) -> list[dict]:
    return listings.vendor_products(draws, shelf.products, shelf.table)


def _advertising_products(draws: Draws, directory: Directory, shelf: Catalog) -> list[dict]:
    return listings.advertising_products(draws, shelf.products, shelf.table, directory.brands)


def _clusters(draws: Draws, anchor: date, shelf: Catalog) -> list[dict]:
    return catalog.clusters(draws, anchor, shelf.cluster_index, shelf.products)


def _structure(
    draws: Draws, anchor: date, reference: date, preset: Preset, directory: Directory
) -> Structure:
    history_days = preset.history_days
    portfolios = campaigns.portfolios(draws, preset.campaigns, anchor, history_days)
    base = campaigns.base_campaigns(
        draws, preset.campaigns, anchor, history_days, directory.connections, portfolios
    )
    configs = [
        campaigns.optimization_config(draws, record, c, reference, anchor)
        for c, record in enumerate(base)
    ]
    return Structure(
        portfolios=portfolios,
        base_campaigns=base,
        configs=configs,
        campaign_table=campaigns.campaign_table(base),
        managed=optimizer.managed_campaigns(draws, base, configs),
    )


def _tree(draws: Draws, anchor: date, preset: Preset, structure: Structure) -> Tree:
    table = structure.campaign_table
    groups = advertising.adgroup_table(draws, anchor, table)
    targets = advertising.target_table(draws, preset.targets, groups, table)
    return Tree(
        adgroup_table=groups,
        target_table=targets,
        search_term_table=advertising.search_term_table(draws, targets, table),
    )


def _base_adgroups(draws: Draws, anchor: date, structure: Structure, tree: Tree) -> list[dict]:
    return advertising.base_adgroups(
        draws, anchor, tree.adgroup_table, structure.base_campaigns, structure.campaign_table
    )


def _optimizer(seed: int, reference: date, structure: Structure, tree: Tree) -> OptimizerEvents:
    return OptimizerEvents.build(
        seed,
        reference,
        len(structure.base_campaigns),
        structure.managed,
        tree.target_table,
        tree.adgroup_table,
    )


def _edits(
    draws: Draws, reference: date, structure: Structure, tree: Tree, events: OptimizerEvents
) -> Edits:
    return Edits.build(
        draws,
        reference,
        structure.base_campaigns,
        structure.campaign_table,
        tree.adgroup_table,
        structure.managed,
        events,
    )


def _campaigns(structure: Structure, edits: Edits) -> list[dict]:
    exponent = structure.campaign_table.exponent
    return [
        edits.campaign(c, record, int(exponent[c]))
        for c, record in enumerate(structure.base_campaigns)
    ]


def _adgroups(
    structure: Structure, tree: Tree, base_adgroups: list[dict], edits: Edits
) -> list[dict]:
    exponent, owner = structure.campaign_table.exponent, tree.adgroup_table.campaign
    return [
        edits.adgroup(j, record, int(exponent[owner[j]])) for j, record in enumerate(base_adgroups)
    ]


def _targets(
    draws: Draws,
    anchor: date,
    structure: Structure,
    tree: Tree,
    base_adgroups: list[dict],
    events: OptimizerEvents,
) -> list[dict]:
    return advertising.targets(
        draws,
        anchor,
        tree.target_table,
        tree.adgroup_table,
        structure.campaign_table,
        structure.base_campaigns,
        base_adgroups,
        events.current_bid,
    )


def _search_terms(draws: Draws, tree: Tree, targets: list[dict]) -> list[dict]:
    return advertising.search_terms(draws, tree.search_term_table, targets)


def _product_ad_table(
    draws: Draws, shelf: Catalog, structure: Structure, tree: Tree
) -> ProductAdTable:
    return advertising.product_ad_table(
        draws,
        tree.adgroup_table,
        structure.campaign_table,
        structure.base_campaigns,
        shelf.by_country,
    )


def _product_ads(
    draws: Draws,
    anchor: date,
    shelf: Catalog,
    table: ProductAdTable,
    campaigns: list[dict],
    adgroups: list[dict],
) -> list[dict]:
    return advertising.product_ads(draws, anchor, table, campaigns, adgroups, shelf.products)


def _change_log(
    draws: Draws,
    reference: date,
    structure: Structure,
    base_adgroups: list[dict],
    tree: Tree,
    events: OptimizerEvents,
    edits: Edits,
    campaigns: list[dict],
    ads: ProductAdTable,
) -> ChangeLog:
    names = Names(
        draws=draws,
        actors=actors(draws),
        campaigns=campaigns,
        base_campaigns=structure.base_campaigns,
        base_adgroups=base_adgroups,
    )
    return ChangeLog.build(
        names, reference, events, edits, structure.managed, tree.target_table, ads
    )


def _workflows(draws: Draws, name: str, anchor: date, structure: Structure) -> Workflows:
    return Workflows(
        records=automation.workflow_records(draws, name, anchor),
        members=automation.workflow_members(structure.managed),
    )


def _tasks(
    draws: Draws,
    anchor: date,
    shelf: Catalog,
    structure: Structure,
    tree: Tree,
    base_adgroups: list[dict],
    edits: Edits,
    targets: list[dict],
    search_terms: list[dict],
    ads: list[dict],
) -> Tasks:
    entities = {
        "campaigns": structure.base_campaigns,
        "adgroups": base_adgroups,
        "targets": targets,
        "product_ads": ads,
        "search_terms": search_terms,
        "products": shelf.products,
    }
    revisions = automation.Revisions(
        edits, structure.campaign_table.exponent, tree.adgroup_table.campaign
    )
    tasks, items = automation.task_records(draws, anchor, entities, revisions)
    return Tasks(tasks=tasks, items=items)


def _platform_changes(draws: Draws, name: str, reference: date, directory: Directory) -> list[dict]:
    return automation.store_changes(draws, name, reference, directory.connections)
