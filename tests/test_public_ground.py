"""Public ground: kelime, its service and its crawler use other projects through the names
those projects export, never their private parts (STYLE.md, "Serve on public ground"): a
private name works until the release that changes it, and then breaks silently.

Another project is any top-level module that is neither the standard library's nor ours.
Its name is private when a part of it starts with `_`: a module (``uvicorn._compat``) or a
name imported from it, or, in a subclass of one of its classes, a ``_name`` its class has
or ours never defines. An attribute ``x._y`` of anything but ``self``/``cls`` is private
too unless kelime defines ``_y`` itself: whose ``x`` is cannot be read from the source, so
this one holds for the standard library as well (``os._exit``). A name is not exported
when

- its module is internal: a module is public when it is its project's top level, when
  DOCUMENTED lists it (or a package above it), or when its package is public and the
  package's ``__init__`` imports it at its top. ``uvicorn.protocols.http.httptools_impl``
  is internal (uvicorn's ``__init__`` imports no ``uvicorn.protocols``), and so is
  ``prometheus_client.mmap_dict`` (its ``__init__`` imports exposition, metrics, registry
  and others, not mmap_dict);
- or its module declares ``__all__`` and the name is not in it (``pydantic.config`` exports
  ``ConfigDict`` and ``with_config``, not ``JsonDict``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OURS = {"kelime", "service", "crawler", "tests"}
SHELLS = ("service", "crawler")  # top-level folders; kelime/service, kelime/crawler link here

#: Modules their project's documentation makes public although their package's __init__
#: does not import them, with the page that does. A package listed makes every module under
#: it public: Scrapy and Twisted call every name without a leading `_` public.
DOCUMENTED = {
    "fastapi.openapi.docs": "https://fastapi.tiangolo.com/reference/openapi/docs/",
    "gunicorn.app.base": "https://docs.gunicorn.org/en/stable/custom.html",
    "lxml.etree": "https://lxml.de/apidoc/lxml.etree.html",
    "numpy.typing": "https://numpy.org/doc/stable/reference/typing.html",
    "prometheus_client.core": "https://prometheus.github.io/client_python/collector/custom/",
    "prometheus_client.multiprocess": "https://prometheus.github.io/client_python/multiprocess/",
    "pydantic.config": "https://docs.pydantic.dev/latest/api/config/",
    "pydantic.fields": "https://docs.pydantic.dev/latest/api/fields/",
    "pydantic.json_schema": "https://docs.pydantic.dev/latest/api/json_schema/",
    "rich.console": "https://rich.readthedocs.io/en/stable/reference/console.html",
    "rich.markup": "https://rich.readthedocs.io/en/stable/reference/markup.html",
    "rich.progress": "https://rich.readthedocs.io/en/stable/reference/progress.html",
    "rich.text": "https://rich.readthedocs.io/en/stable/reference/text.html",
    "scrapy": "https://docs.scrapy.org/en/latest/versioning.html#api-stability",
    "starlette.datastructures": "https://www.starlette.io/middleware/#pure-asgi-middleware",
    "starlette.exceptions": "https://www.starlette.io/exceptions/",
    "starlette.middleware.cors": "https://www.starlette.io/middleware/#corsmiddleware",
    "starlette.requests": "https://www.starlette.io/requests/",
    "starlette.responses": "https://www.starlette.io/responses/",
    "starlette.routing": "https://www.starlette.io/routing/",
    "starlette.types": "https://www.starlette.io/middleware/#pure-asgi-middleware",
    "twisted": "https://docs.twisted.org/en/stable/development/compatibility-policy.html",
    "uvicorn.middleware.proxy_headers":
        "https://www.uvicorn.org/deployment/#proxies-and-forwarded-headers",
}


def sources() -> list[Path]:
    """Every module of kelime/, service/ and crawler/, each once (not through the links)."""
    core = [p for p in (ROOT / "kelime").rglob("*.py")
            if p.relative_to(ROOT / "kelime").parts[0] not in SHELLS]
    return sorted(core + [p for shell in SHELLS for p in (ROOT / shell).rglob("*.py")])


def our_names(paths: list[Path]) -> frozenset[str]:
    """The `_names` kelime defines (functions, classes, assigned names and attributes)."""
    names: set[str] = set()
    for path in paths:
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(n.name)
            elif isinstance(n, ast.Name | ast.Attribute) and isinstance(n.ctx, ast.Store):
                names.add(n.id if isinstance(n, ast.Name) else n.attr)
    return frozenset(filter(_private, names))


def private_uses(source: str, ours: frozenset[str] = frozenset()) -> list[str]:
    """`line: what` for each private or unexported name of another project `source` uses."""
    tree, found, theirs = ast.parse(source), [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in (a for a in node.names if _theirs(a.name)):
                found += [(node.lineno, why) for why in [_unexported(a.name)] if why]
                bound = a.name if a.asname else a.name.split(".")[0]
                theirs[a.asname or bound] = _lookup(bound)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _theirs(node.module):
            for a in node.names:
                found += [(node.lineno, why) for why in [_unexported(node.module, a.name)] if why]
                theirs[a.asname or a.name] = _lookup(node.module, a.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in ours \
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append((node.lineno, f"{ast.unparse(node)}: a private attribute"))
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                head, *rest = ast.unparse(base).split(".")
                cls = _resolve(theirs.get(head), rest)
                if isinstance(cls, type):
                    found += [(node.lineno, why) for why in _private_in_subclass(node, cls)]
    return [f"{line}: {why}" for line, why in sorted(found)]


def _theirs(module: str | None) -> bool:
    top = (module or "").split(".")[0]
    return top not in sys.stdlib_module_names and top not in OURS


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _unexported(module: str, name: str | None = None) -> str | None:
    """Why `module` (or `name` imported from it) is not a public name of its project."""
    dotted = module if name is None else f"{module}.{name}"
    if any(_private(part) for part in dotted.split(".")):
        return f"{dotted}: private (a part starts with `_`)"
    if why := _internal(module):
        return f"{dotted}: internal module: {why}"
    if name is None:
        return None
    if _is_module(dotted):
        return _unexported(dotted)
    exported = getattr(importlib.import_module(module), "__all__", None)
    if exported is not None and name not in exported:
        return f"{dotted}: not exported (not in {module}.__all__)"
    return None


@cache
def _internal(module: str) -> str | None:
    """Why `module` is internal to its project (None: public); the rule is the docstring's."""
    package, _, child = module.rpartition(".")
    if not package or any(module == m or module.startswith(m + ".") for m in DOCUMENTED):
        return None
    if why := _internal(package):
        return why
    if child not in _imported_by(package):
        return f"{package}'s __init__ does not import {module}, and DOCUMENTED does not list it"
    return None


@cache
def _imported_by(package: str) -> frozenset[str]:
    """The submodules a package's __init__ imports at its top (`from .x import`, `from .
    import x`, `import package.x`), by their name in the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations or not str(spec.origin).endswith(".py"):
        return frozenset()
    modules = []
    for node in ast.parse(Path(str(spec.origin)).read_bytes()).body:
        if isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
                if node.level else str(node.module)
            modules += [f"{base}.{a.name}" for a in node.names] if base == package else [base]
        elif isinstance(node, ast.Import):
            modules += [a.name for a in node.names]
    prefix = package + "."
    return frozenset(m[len(prefix):].split(".")[0] for m in modules if m.startswith(prefix))


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except ImportError:  # the part before the last dot is a module, not a package
        return False


def _lookup(module: str, name: str | None = None) -> Any:
    """What an import of theirs binds, or None when it cannot be imported here."""
    try:
        found = importlib.import_module(module)
    except ImportError:
        return None
    return found if name is None else getattr(found, name, None)


def _resolve(obj: Any, path: list[str]) -> Any:
    for name in path:
        obj = getattr(obj, name, None)
    return obj


def _private_in_subclass(node: ast.ClassDef, base: type) -> list[str]:
    """`_names` a subclass of `base` uses that are base's: on the class, or never defined here
    (a `self._x` read that only base's __init__ sets)."""
    ours = {n.name for n in ast.walk(node) if isinstance(n, ast.FunctionDef)}
    ours |= {t.attr for n in ast.walk(node) if isinstance(n, ast.Assign | ast.AnnAssign)
             for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
             if isinstance(t, ast.Attribute) and ast.unparse(t.value) == "self"}
    used = ours | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    return [f"{node.name}.{n}: a private name of {base.__name__}, in a subclass of it"
            for n in sorted(used) if _private(n) and (hasattr(base, n) or n not in ours)]


def test_kelime_uses_other_projects_through_their_public_names_only():
    """The crawler subclassed Scrapy's RobotsTxtMiddleware to override `_parse_robots` and
    `_robots_error` (and fill `_parsers`), and set Twisted's pool through the download
    handler's `_pool`; the cache read sqlite-utils' `Migrations._migrations`; the schemas
    imported pydantic.config's unexported `JsonDict`. Any release could break them."""
    paths, found = sources(), []
    ours = our_names(paths)
    for path in paths:
        name = path.relative_to(ROOT).as_posix()
        found += [f"{name}:{use}" for use in private_uses(path.read_text(encoding="utf-8"), ours)]
    assert found == []


def test_each_documented_module_exists():
    assert [m for m in DOCUMENTED if importlib.util.find_spec(m) is None] == []


def test_the_check_sees_the_issues_three_examples():
    ours = our_names(sources())
    assert private_uses("from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol") == [
        "1: uvicorn.protocols.http.httptools_impl.HttpToolsProtocol: internal module: uvicorn's "
        "__init__ does not import uvicorn.protocols, and DOCUMENTED does not list it"]
    assert private_uses("from prometheus_client.mmap_dict import MmapedDict") == [
        "1: prometheus_client.mmap_dict.MmapedDict: internal module: prometheus_client's "
        "__init__ does not import prometheus_client.mmap_dict, and DOCUMENTED does not list it"]
    assert private_uses("from kelime.tdk.store import MIGRATIONS\n"
                        "names = MIGRATIONS._migrations\n", ours) == [
        "2: MIGRATIONS._migrations: a private attribute"]


def test_the_check_sees_each_kind_of_private_use():
    assert private_uses("import uvicorn._compat\nfrom scrapy.utils.misc import _private\n"
                        "from scrapy.core.downloader.handlers._httpx import X\n") == [
        "1: uvicorn._compat: private (a part starts with `_`)",
        "2: scrapy.utils.misc._private: private (a part starts with `_`)",
        "3: scrapy.core.downloader.handlers._httpx.X: private (a part starts with `_`)"]
    assert private_uses("import prometheus_client.mmap_dict\n"
                        "from prometheus_client import mmap_dict\n") == [
        f"{line}: prometheus_client.mmap_dict: internal module: prometheus_client's __init__ "
        "does not import prometheus_client.mmap_dict, and DOCUMENTED does not list it"
        for line in (1, 2)]
    assert private_uses("from pydantic.config import JsonDict") == [
        "1: pydantic.config.JsonDict: not exported (not in pydantic.config.__all__)"]
    assert private_uses("from scrapy.downloadermiddlewares.robotstxt import "
                        "RobotsTxtMiddleware\nclass A(RobotsTxtMiddleware):\n"
                        "    def _robots_error(self):\n        self._parsers[1] = 2\n"
                        "    def f(self):\n        self._pool.retryAutomatically = 1\n"
                        "        self.h._x = self._mine = 3\n") == [
        "2: A._parsers: a private name of RobotsTxtMiddleware, in a subclass of it",
        "2: A._pool: a private name of RobotsTxtMiddleware, in a subclass of it",
        "2: A._robots_error: a private name of RobotsTxtMiddleware, in a subclass of it",
        "2: A._x: a private name of RobotsTxtMiddleware, in a subclass of it",
        "7: self.h._x: a private attribute"]
    assert private_uses("import scrapy\nclass S(scrapy.Spider):\n    def parse(self): pass\n"
                        "class T(scrapy.Spider):\n    def _parse(self): self._y = 1\n") == [
        "4: T._parse: a private name of Spider, in a subclass of it"]


def test_the_check_lets_public_names_be():
    assert private_uses("import os\nimport uvicorn\nimport numpy.typing\n"
                        "from prometheus_client import multiprocess, Counter\n"
                        "from prometheus_client.exposition import CONTENT_TYPE_LATEST\n"
                        "from scrapy.utils.sitemap import Sitemap\n"
                        "from sqlite_utils.migrations import Migrations\n"
                        "from starlette.middleware.cors import CORSMiddleware\n"
                        "from twisted.internet.task import LoopingCall\n") == []
