"""Which tests start a whole run: a Dagster run, an `adwh` command, a server or a process.

The quick loop (`make test-quick`, docs/developers.md) runs the others: the library, the transforms,
the warehouse's builds, the sandbox, in a couple of minutes. A test is marked `whole` at
collection, from its code rather than by hand, so a new test is sorted without anyone
remembering to: when its own source, a fixture it uses, or a function of its module that
either calls, does one of the things below.
"""

import ast
import inspect
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]

# What starts a whole run or a server, as the tests write it.
STARTS = re.compile(
    r"\bmain\(|\badwh\(|execute_in_process|\bmaterialize\(|\bspawn\(|\bserving\("
    r"|faulty_run|isolated_run|clean_run|kill_and_recover|\bdeployment\(|\bcli_run\("
    r"|copy_of_a_run\(|scheduled_day|evaluate_alert_sensor|Controller\(|\bwebhook\("
    r"|\breader\(|Popen|\blocal_ui\(|\[ADWH\b"
)
# Tests of the production deployment (PostgreSQL, the code server, the daemon, the proxy).
WHOLE_FOLDERS = ("deployment",)


def source(function: Callable) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def ours(function: Callable) -> bool:
    """Defined in the tests or the benchmark (whatever name pytest imported its module by)."""
    try:
        path = Path(inspect.getsourcefile(function) or "").resolve()
    except TypeError:
        return False
    return path.is_relative_to(REPO / "tests") or path.is_relative_to(REPO / "bench")


@cache
def starting_names(module: ModuleType) -> frozenset[str]:
    """The module's functions that start a whole run, directly or through each other; those
    it imports from another module of the tests or the benchmark, as that module decides."""
    functions = {
        name: value
        for name, value in vars(module).items()
        if inspect.isfunction(value) and ours(value)
    }
    own = {n: source(f) for n, f in functions.items() if f.__module__ == module.__name__}
    found = {n for n, code in own.items() if STARTS.search(code)}
    found |= {
        n
        for n, f in functions.items()
        if n not in own and (home := inspect.getmodule(f)) is not None and n in starting_names(home)
    }
    while more := {n for n, code in own.items() if n not in found and uses(code, found)}:
        found |= more
    return frozenset(found)


def uses(code: str, names: set[str] | frozenset[str]) -> bool:
    """`code` calls, or passes on, one of `names`."""
    return bool(names) and not names_in(code).isdisjoint(names)


@cache
def names_in(code: str) -> frozenset[str]:
    """Every name `code` reads: parsed once, though a fixture's code is asked of by each test
    that uses it."""
    return frozenset(
        node.id for node in ast.walk(ast.parse(_dedented(code))) if isinstance(node, ast.Name)
    )


def starts_a_whole_run(code: str, module: ModuleType) -> bool:
    return bool(STARTS.search(code)) or uses(code, starting_names(module))


def _dedented(code: str) -> str:
    lines = code.splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines)


def fixture_functions(item: pytest.Item) -> list[Callable]:
    """The functions of the fixtures `item` uses that this project defines: in its module, or
    in a conftest.py of its folder or above (pytest's own fixtures start nothing of ours)."""
    conftests = conftests_above(item.path.parent)
    found = []
    parameters = direct_parameters(item)
    for name in (n for n in item.fixturenames if n not in parameters):
        for home in [item.module, *conftests]:
            fixture = getattr(home, name, None)
            if fixture is not None and hasattr(fixture, "__wrapped__"):
                found.append(inspect.unwrap(fixture))
                break
    return found


@cache
def conftests_above(folder: Path) -> tuple[ModuleType, ...]:
    """The conftest.py modules of `folder` and the folders above it: asked once per folder,
    for a look through every imported module takes a tenth of a second and a suite has
    hundreds of tests."""
    folders = {folder, *folder.parents}
    return tuple(
        module
        for module in list(sys.modules.values())
        if (file := getattr(module, "__file__", None))
        and Path(file).name == "conftest.py"
        and Path(file).parent in folders
    )


def direct_parameters(item: pytest.Item) -> set[str]:
    """The names `item`'s own parametrize marks give values to: no fixture of that name is
    used (unless indirect, where the fixture takes the value)."""
    names: set[str] = set()
    for mark in item.iter_markers("parametrize"):
        argnames = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
        given = [n.strip() for n in argnames.split(",")] if isinstance(argnames, str) else argnames
        indirect = mark.kwargs.get("indirect", False)
        names |= {n for n in given if not (indirect is True or n in (indirect or ()))}
    return names


def is_whole(item: pytest.Item) -> bool:
    """The test, or a fixture it uses, starts a whole run."""
    function = getattr(item, "function", None)
    if function is None:
        return False
    if set(item.path.relative_to(REPO).parts) & set(WHOLE_FOLDERS):
        return True
    pieces = [(source(function), item.module)]
    pieces += [(source(f), inspect.getmodule(f)) for f in fixture_functions(item)]
    return any(starts_a_whole_run(code, module) for code, module in pieces if code and module)


def mark_whole_runs(items: list[pytest.Item]) -> None:
    for item in items:
        if is_whole(item):
            item.add_marker(pytest.mark.whole)
