"""The sandbox's imports point one way: builders beneath the assembler, the assembler beneath
the resource families, the families beneath the service (no circle anywhere:
tests/test_layers.py)."""

from tests.imports import ROOT, import_graph, package_modules, reaches

# Modules that build an account's data from plain inputs: they know nothing of the account
# object that assembles them, nor of the service that serves them.
BUILDERS = (
    "sandbox.connections",
    "sandbox.catalog",
    "sandbox.listings",
    "sandbox.campaigns",
    "sandbox.advertising",
    "sandbox.optimizer",
    "sandbox.changes",
    "sandbox.automation",
    "sandbox.stages",
    "sandbox.populations",
)
FAMILIES = (
    "sandbox.reference_api",
    "sandbox.catalog_api",
    "sandbox.advertising_api",
    "sandbox.history_api",
    "sandbox.changes_api",
    "sandbox.metrics_api",
    "sandbox.automation_api",
)


def sandbox_graph() -> dict[str, set[str]]:
    return import_graph(package_modules(ROOT, ["sandbox"]))


def test_imports_point_down_from_the_service_to_the_builders():
    graph = sandbox_graph()
    assert {*BUILDERS, *FAMILIES, "sandbox.assembly", "sandbox.service"} <= set(graph)
    above_builders = {"sandbox.assembly", "sandbox.routing", "sandbox.service", *FAMILIES}
    for builder in BUILDERS:
        assert not reaches(graph, builder) & above_builders, builder
    for family in FAMILIES:
        assert "sandbox.service" not in reaches(graph, family), family
        assert "sandbox.assembly" in reaches(graph, family), family
    variants = reaches(graph, "sandbox.variants")
    assert not variants & {"sandbox.service", "sandbox.routing", *FAMILIES}
    assert set(FAMILIES) <= reaches(graph, "sandbox.service")
