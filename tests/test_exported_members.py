"""kelime's public surface is what `kelime/__init__.py` lists (like httpx's own test), and
its one exception tree (`kelime.errors`) holds every exception any of its modules defines."""

from __future__ import annotations

import ast
import builtins
import importlib
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

import kelime
from kelime import errors

#: The exceptions outside KelimeError's tree, each for its reason. They never reach a user
#: as themselves: each is caught where it is raised, or is click's own way out of the CLI.
OUTSIDE = {
    "kelime.anagram.cover.OutOfTime": "control flow: the split's search reached its "
    "deadline; kelime.anagram.split catches it and answers its best layout so far",
    "kelime.crawler.fetch.TransientReply": "control flow: tenacity retries a look-up on it; "
    "`lookup` turns the last one into FetchError",
    "kelime.crawler.fetch.BadReply": "control flow: a reply not worth asking again for; "
    "`lookup` turns it into FetchError",
    "kelime.cli.common.Unaskable": "a click.ClickException: click prints `Error: …` and "
    "exits with its exit_code (the CLI's boundary, where KelimeErrors are turned into it)",
    "kelime.cli.common.JsonError": "a click.ClickException, as Unaskable, shown as JSON",
    "kelime.cli.common.JsonUnaskable": "a click.ClickException, as JsonError (exit 2)",
}


def test_all_names_are_exported_and_nothing_else_is_promised():
    public = {name for name in dir(kelime) if not name.startswith("_")}
    assert set(kelime.__all__) <= public
    modules = {"anagram", "board", "cli", "crawler", "errors", "games", "lexicon", "locks", "normalize",
               "policy", "reports", "reports_accept", "reports_pg", "sqlite",
               "service", "sources", "suggest", "tdk"}
    assert public - set(kelime.__all__) <= modules


def test_every_error_is_a_kelime_error():
    """Every exception class defined in kelime, core and shells (cli, service, crawler), at
    any depth of a module, is a KelimeError, or in OUTSIDE with its reason."""
    walked, found = kelime_exceptions(kelime)
    assert {"kelime.errors", "kelime.anagram.errors", "kelime.cli.common", "kelime.service.errors",
            "kelime.service.routes.admin", "kelime.crawler.fetch"} <= walked  # shells too
    assert len(walked) > 90 and len(found) > 30
    strays = {name for name, in_tree in found.items() if not in_tree}
    assert strays - set(OUTSIDE) == set(), "exceptions outside KelimeError's tree"
    assert set(OUTSIDE) - strays == set(), "OUTSIDE names what is no longer outside (or gone)"
    assert issubclass(errors.PolicyError, errors.BuildError)
    assert issubclass(errors.OutdatedLexicon, errors.LexiconError)


def test_the_check_finds_a_stray_exception_anywhere_in_a_package(tmp_path, monkeypatch):
    package = tmp_path / "mutant"
    (package / "deep").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "deep" / "__init__.py").write_text("")
    (package / "deep" / "fine.py").write_text(
        "from kelime.errors import KelimeError, LexiconError\n"
        "class Fine(KelimeError, ValueError): ...\n"
        "class AlsoFine(LexiconError): ...\n"
        "class NotAnError: ...\n")
    (package / "deep" / "stray.py").write_text(
        "from kelime import errors\n"
        "class Oops(Exception): ...\n"
        "class Inherited(Oops): ...\n"
        "class Fine(errors.CacheError): ...\n"
        "def later():\n"
        "    class Hidden(LookupError): ...\n"
        "    return Hidden\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        walked, found = kelime_exceptions(importlib.import_module("mutant"))
    finally:
        for name in [n for n in sys.modules if n == "mutant" or n.startswith("mutant.")]:
            del sys.modules[name]
    assert walked == {"mutant", "mutant.deep", "mutant.deep.fine", "mutant.deep.stray"}
    assert found == {"mutant.deep.fine.Fine": True, "mutant.deep.fine.AlsoFine": True,
                     "mutant.deep.stray.Oops": False, "mutant.deep.stray.Inherited": False,
                     "mutant.deep.stray.Fine": True,
                     "mutant.deep.stray.later.<locals>.Hidden": False}


def test_a_base_the_check_cannot_resolve_fails_it():
    made = ast.parse("def make(base):\n    class Odd(base): ...\n    return Odd\n")
    with pytest.raises(AssertionError, match="mutant: cannot tell what the base base is"):
        exceptions_in(made, "mutant", {})


def kelime_exceptions(package: ModuleType) -> tuple[set[str], dict[str, bool]]:
    """The modules of `package` (all of them, imported) and the exception classes each
    defines, at any depth: qualified name → whether it is a KelimeError."""
    def refuse(name: str) -> None:
        raise AssertionError(f"cannot import {name}")

    names = {package.__name__} | {m.name for m in pkgutil.walk_packages(
        package.__path__, package.__name__ + ".", onerror=refuse)}
    found: dict[str, bool] = {}
    for name in names:
        module = importlib.import_module(name)
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        found.update(exceptions_in(tree, name, vars(module)))
    return names, found


def exceptions_in(tree: ast.Module, module: str, namespace: dict) -> dict[str, bool]:
    """The exception classes a module's syntax tree defines, at any depth, each a KelimeError
    or not; its bases are looked up among its earlier classes, then in `namespace` (the
    module's), then in builtins. A base that cannot be found fails the check."""
    exceptions: dict[str, bool] = {}
    kinds: dict[str, tuple[bool, bool]] = {}  # class name → (an exception, a KelimeError)

    def kind_of(node: ast.ClassDef, scope: str) -> tuple[bool, bool]:
        made = namespace.get(node.name) if not scope else None  # the class itself, if known
        if not (isinstance(made, type) and made.__module__ == module):
            bases = [kind_of_base(base) for base in node.bases]
            return any(b[0] for b in bases), any(b[1] for b in bases)
        return issubclass(made, BaseException), issubclass(made, errors.KelimeError)

    def kind_of_base(base: ast.expr) -> tuple[bool, bool]:
        if isinstance(base, ast.Name) and base.id in kinds:
            return kinds[base.id]
        found = value_of(base)
        if not isinstance(found, type):
            return False, False  # NamedTuple, TypedDict: functions making classes
        return issubclass(found, BaseException), issubclass(found, errors.KelimeError)

    def value_of(node: ast.expr) -> object:
        if isinstance(node, ast.Subscript):  # Generic[T]
            return value_of(node.value)
        if isinstance(node, ast.Attribute):
            return getattr(value_of(node.value), node.attr)
        if isinstance(node, ast.Name) and node.id in namespace:
            return namespace[node.id]
        if isinstance(node, ast.Name) and hasattr(builtins, node.id):
            return getattr(builtins, node.id)
        raise AssertionError(f"{module}: cannot tell what the base {ast.unparse(node)} is")

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                kinds[child.name] = kind = kind_of(child, scope)
                if kind[0]:
                    exceptions[f"{module}.{scope}{child.name}"] = kind[1]
                visit(child, f"{scope}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{scope}{child.name}.<locals>.")
            else:
                visit(child, scope)

    visit(tree, "")
    return exceptions
