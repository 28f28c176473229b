"""The import contract of kelime's core, derived from pyproject.toml: an import-linter
contract type (`make lint` runs it; [tool.importlinter] names it).

The core is every module of the root package (`kelime` itself included) outside the
shells the contract names; a module added later is core without a list to edit. Each
import a core module makes, at the top or inside a function, must be of

- the standard library,
- the core itself (never a shell: kelime.cli, kelime.service, kelime.crawler), or
- a top-level module of a base dependency ([project] dependencies), mapped from its
  distribution name by `importlib.metadata.packages_distributions()`, except the base
  dependencies the contract names `shell_only` (the command line's click and rich).

So an extra's library (FastAPI, Scrapy, msgspec, lxml …) in the core breaks the contract,
and `pip install kelime` installs everything the core imports.

    [tool.importlinter]
    contract_types = ["base: scripts.core_contract.BaseDependencies"]

    [[tool.importlinter.contracts]]
    type = "base"
    shells = ["kelime.cli", "kelime.service", "kelime.crawler"]
    shell_only = ["click", "rich"]
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Iterable
from importlib.metadata import packages_distributions
from pathlib import Path

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output
from importlinter.domain.contract import InvalidContractOptions


def distribution(requirement: str) -> str:
    """A requirement's distribution name, normalised (`uvicorn[standard]>=0.31` → uvicorn)."""
    found = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert found, requirement
    return re.sub(r"[-_.]+", "-", found[0]).lower()


def declared(pyproject: Path) -> dict[str, str]:
    """Each distribution pyproject.toml declares → "base" or the first extra naming it."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    where: dict[str, str] = {}
    for extra, requirements in project.get("optional-dependencies", {}).items():
        for requirement in requirements:
            where.setdefault(distribution(requirement), extra)
    return where | {distribution(r): "base" for r in project["dependencies"]}


def import_names(distributions: set[str]) -> set[str]:
    """The top-level modules the installed `distributions` provide."""
    return {name for name, dists in packages_distributions().items()
            if distributions & {distribution(d) for d in dists}}


def base_modules(pyproject: Path, shell_only: frozenset[str] = frozenset()) -> set[str]:
    """The top-level modules the core may import besides the standard library."""
    base = {d for d, where in declared(pyproject).items() if where == "base"}
    return import_names(base - {distribution(d) for d in shell_only})


class BaseDependencies(Contract):
    """The core imports only the standard library, itself and the base dependencies."""

    type_name = "base"

    shells = fields.ListField(subfield=fields.StringField())
    shell_only = fields.ListField(subfield=fields.StringField(), required=False, default=[])
    pyproject = fields.StringField(required=False, default="pyproject.toml")

    def validate(self) -> None:
        where = declared(Path(str(self.pyproject)))
        if stray := [d for d in self.option("shell_only") if where.get(distribution(d)) != "base"]:
            raise InvalidContractOptions({"shell_only": f"not base dependencies: {stray}"})

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        pyproject = Path(str(self.pyproject))
        where = declared(pyproject)
        shell_only = frozenset(self.option("shell_only"))
        allowed = base_modules(pyproject, shell_only) | set(sys.stdlib_module_names)
        shells = tuple(self.option("shells"))
        roots = self.session_options["root_packages"]
        broken = []
        for module in sorted(core(graph, roots, shells)):
            for imported in sorted(graph.find_modules_directly_imported_by(module)):
                why = refusal(imported, roots, shells, allowed, where)
                if why:
                    lines = sorted(d["line_number"] for d in graph.get_import_details(
                        importer=module, imported=imported))
                    broken.append({"importer": module, "imported": imported, "why": why,
                                   "lines": lines})
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def option(self, name: str) -> list[str]:
        """A list option, as its field parsed it."""
        return [str(value) for value in getattr(self, name)]

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["broken"]:
            lines = ", ".join(f"l.{n}" for n in item["lines"])
            output.print_error(f"{item['importer']} -> {item['imported']} ({lines}): "
                               f"{item['why']}", bold=False)
        output.new_line()


def core(graph: ImportGraph, roots: list[str], shells: tuple[str, ...]) -> set[str]:
    """Every module of the root packages outside the shells."""
    return {m for m in graph.modules if within(m, roots) and not within(m, shells)}


def within(module: str, packages: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def refusal(imported: str, roots: list[str], shells: tuple[str, ...], allowed: set[str],
            where: dict[str, str]) -> str | None:
    """Why the core may not import `imported` (None: it may)."""
    if within(imported, shells):
        return "a shell (the shells import the core, never the other way)"
    top = imported.split(".")[0]
    if within(imported, roots) or top in allowed:
        return None
    dists = {distribution(d) for d in packages_distributions().get(top, [])}
    found = sorted({where[d] for d in dists if d in where})
    if found == ["base"]:
        return f"{top} is a base dependency for the shells only (shell_only)"
    if found:
        return f"{top} is in kelime's {' and '.join(found)} extra, not its base"
    return (f"{top} is neither the standard library nor an installed dependency that "
            "pyproject.toml declares")
