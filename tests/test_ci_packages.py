"""CI installs every system program a test runs: a deployment test that looks up a program
`.ci/packages` does not list would skip on a developer's machine and fail on CI's fresh one,
so the next program added cannot be forgotten there."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# How tests and the helpers they import look a program up.
LOOKUPS = {"required_program", "installed", "which"}


def listed_programs() -> set[str]:
    """The programs `.ci/install-packages` installs when missing."""
    lines = (ROOT / ".ci" / "packages").read_text().splitlines()
    return {line.split()[0] for line in lines if line.strip() and not line.startswith("#")}


def imported_bench_modules(paths: list[Path]) -> set[Path]:
    """The bench modules `paths` import, and those these import in turn: the bench code the
    suite runs (the rest, such as the UI's page timings, only `make bench*` does)."""
    found: set[Path] = set()
    pending = list(paths)
    while pending:
        tree = ast.parse(pending.pop().read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "bench":
                names = [f"bench.{alias.name}" for alias in node.names]  # from bench import x
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                names = []
            for name in names:
                module = ROOT / (name.replace(".", "/") + ".py")
                if name.startswith("bench.") and module.exists() and module not in found:
                    found.add(module)
                    pending.append(module)
    return found


def looked_up_programs() -> dict[str, str]:
    """Each program a test or the bench code it imports looks up by name, with where."""
    found = {}
    tests = list((ROOT / "tests").rglob("*.py"))
    for path in [*tests, *sorted(imported_bench_modules(tests))]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
            first = node.args[0]
            if name in LOOKUPS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                found[first.value] = f"{path.relative_to(ROOT)}:{node.lineno}"
    return found


def test_ci_installs_every_program_a_test_looks_up():
    looked_up = looked_up_programs()
    assert {"caddy", "pgbouncer"} <= looked_up.keys()  # the scan sees the lookups we know of
    missing = {
        program: where for program, where in looked_up.items() if program not in listed_programs()
    }
    assert not missing, f"add these to .ci/packages (program, Debian package): {missing}"


def test_ci_run_installs_the_listed_packages_before_the_suite():
    steps = (ROOT / ".ci" / "run").read_text()
    assert steps.index(".ci/install-packages") < steps.index("make test")
