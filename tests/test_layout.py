"""The layout is the architecture: the core (`kelime` minus its shells) imports only the
standard library, itself and kelime's base dependencies (pyproject.toml), and installs and
runs without any extra; `kelime define` loads no Scrapy; a built wheel installed outside the
checkout carries the policy and adds no generic top-level name to site-packages."""

from __future__ import annotations

import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
import sqlite_utils

import kelime
from scripts.core_contract import declared, import_names

ROOT = Path(__file__).resolve().parents[1]
#: The shells as the import contract names them ([tool.importlinter] in pyproject.toml).
SHELLS = tuple(next(c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
    "importlinter"]["contracts"] if c["id"] == "core")["shells"])


def core_modules() -> list[str]:
    """Every module of the kelime package outside the shells."""
    found = ["kelime"]
    for info in pkgutil.walk_packages(kelime.__path__, "kelime."):
        if not info.name.startswith(SHELLS):
            found.append(info.name)
    return sorted(found)


def extras_only() -> set[str]:
    """The top-level modules of every library an extra brings and the base does not (FastAPI,
    Scrapy, msgspec, pytest …), read from pyproject.toml: what the core never loads."""
    where = declared(ROOT / "pyproject.toml")
    return import_names({d for d, extra in where.items() if extra != "base"} - {"kelime"})


def loaded_after(python: str, module: str, cwd: Path | None = None) -> list[str]:
    """The top-level and kelime.* modules a fresh interpreter holds after importing `module`."""
    code = (f"import json, sys; import {module}; "
            "print(json.dumps(sorted(m for m in sys.modules)))")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=cwd,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def leaks(modules: list[str], forbidden: set[str]) -> list[str]:
    """The shells' modules and the extras' libraries among `modules`."""
    return [m for m in modules if m.startswith(SHELLS) or m.split(".")[0] in forbidden]


def test_the_core_has_modules_to_check():
    names = core_modules()
    assert {"kelime.lexicon.format", "kelime.tdk.store", "kelime.policy"} <= set(names)
    assert not any(n.startswith(SHELLS) for n in names)


def test_the_extras_libraries_are_read_from_pyproject():
    assert {"fastapi", "uvicorn", "msgspec", "prometheus_client", "scrapy", "twisted", "lxml",
            "httpx", "wordfreq"} <= extras_only()
    assert not {"marisa_trie", "numpy", "pydantic", "sqlite_utils", "click"} & extras_only()


@pytest.fixture(scope="module")
def forbidden() -> set[str]:
    return extras_only()


@pytest.mark.parametrize("module", core_modules())
def test_core_module_imports_no_shell(module, forbidden):
    assert leaks(loaded_after(sys.executable, module), forbidden) == []


def test_define_loads_no_scrapy():
    modules = loaded_after(sys.executable, "kelime.crawler.fetch")
    assert "httpx" in modules and not [m for m in modules if m.split(".")[0] in
                                       ("scrapy", "twisted")]
    assert not [m for m in loaded_after(sys.executable, "kelime.cli") if m.split(".")[0] in
                ("scrapy", "twisted", "fastapi", "uvicorn", "httpx")]


def _copy_sources(dest: Path) -> Path:
    """The checkout without its virtualenv, git data and built lexicons."""
    ignore = shutil.ignore_patterns(".venv", ".git", ".builds", "*.egg-info", "build", "dist",
                                    "__pycache__", ".pytest_cache", ".hypothesis", "tr", "*.sqlite")
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """kelime's wheel, built from a copy of the checkout."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = _copy_sources(tmp / "src")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                            str(tmp / "dist"), str(src)], capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr
    (found,) = (tmp / "dist").glob("kelime-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding only the built wheel; its dependencies come from this test's
    environment through a .pth line (which does not bring this checkout's editable install)."""
    env_dir = tmp_path_factory.mktemp("installed") / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    deps = Path(sqlite_utils.__file__).parents[1]  # this environment's site-packages
    (site / "deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    python = env_dir / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                           "--no-deps", str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return env_dir


@pytest.mark.slow
def test_the_wheel_adds_no_generic_top_level_name(installed):
    site = next((installed / "lib").glob("python3*/site-packages"))
    names = {p.name for p in site.iterdir()} - {"deps.pth", "__pycache__"}
    tops = {n for n in names if not n.endswith((".dist-info", ".pth"))}
    assert tops == {"kelime"}, tops
    assert (site / "kelime" / "crawler" / "spider.py").is_file()
    assert (site / "kelime" / "service" / "app.py").is_file()


@pytest.mark.slow
def test_the_installed_build_applies_the_policy(installed, tmp_path):
    kelime_cmd = str(installed / "bin" / "kelime")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KELIME_")}
    built = subprocess.run([kelime_cmd, "build", "--bootstrap", "--out", "data"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300, env=env)
    assert built.returncode == 0, built.stderr
    checked = subprocess.run([kelime_cmd, "check", "--json", "orospu", "kitap"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60, env=env)
    results = {r["word"]: r["reason"] for r in json.loads(checked.stdout)["results"]}
    assert results == {"orospu": "obscene", "kitap": None}
    where = loaded_after(str(installed / "bin" / "python"), "kelime.lexicon.write", cwd=tmp_path)
    assert leaks(where, extras_only()) == []
    origin = subprocess.run([str(installed / "bin" / "python"), "-c",
                             "import kelime; print(kelime.__file__)"], cwd=tmp_path,
                            capture_output=True, text=True).stdout
    assert str(installed) in origin and str(ROOT) not in origin


@pytest.fixture(scope="module")
def base_install(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel and what pip installs with it, no extra: the base
    dependencies pyproject.toml declares, at the versions of constraints.txt (pip's cache or
    index, as `make` installs)."""
    env_dir = tmp_path_factory.mktemp("base") / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"),
                           "install", "-q", "-c", str(ROOT / "constraints.txt"), str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return env_dir


@pytest.mark.slow
def test_the_base_install_runs_the_core_and_check(base_install, offline_lexicons, tmp_path):
    """`pip install kelime` alone: no extra's library, every core module imports, and
    `kelime check` answers on the offline lexicons; `kelime serve` names its extra."""
    python, kelime_cmd = (str(base_install / "bin" / name) for name in ("python", "kelime"))
    absent = sorted({"fastapi", "starlette", "uvicorn", "scrapy", "twisted", "prometheus_client",
                     "httpx", "gunicorn"} | extras_only())
    code = ("import importlib, importlib.util, json, sys; "
            f"[importlib.import_module(m) for m in {core_modules()!r}]; "
            f"print(json.dumps([[m for m in {absent!r} if importlib.util.find_spec(m)], "
            "sorted(m for m in sys.modules if m.startswith('kelime.') and "
            f"m.startswith({SHELLS!r}))]))")
    done = subprocess.run([python, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[], []]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KELIME_")}

    def kelime_run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([kelime_cmd, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120, env=env)

    checked = kelime_run("check", "--data", str(offline_lexicons), "kitap")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("✓  kitap\nlexicon tr "), checked.stdout
    served = kelime_run("serve", "--data", str(offline_lexicons))
    assert (served.returncode, served.stderr) == (
        1, "Error: kelime serve needs the [serve] extra: pip install 'kelime[serve]'\n")


def test_pyproject_lists_every_package():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    import kelime.crawler
    import kelime.service

    found = {"kelime"}
    for package in (kelime, kelime.crawler, kelime.service):  # mapped from crawler/, service/
        found |= {package.__name__, *(i.name for i in pkgutil.walk_packages(
            package.__path__, package.__name__ + ".") if i.ispkg)}
    assert found <= listed, f"add {sorted(found - listed)} to [tool.setuptools] packages"


# --- The import contract (`lint-imports`, run by `make lint`) ---------------------------------

def _contract_copy(dest: Path) -> Path:
    """kelime's sources (the shells' links followed), the contract's code and pyproject.toml,
    to edit and check."""
    shutil.copytree(ROOT / "kelime", dest / "kelime",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "scripts", dest / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def _lint_imports(where: Path) -> subprocess.CompletedProcess:
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    env = {**os.environ, "PYTHONPATH": str(where),  # the copy, before the editable install
           "COLUMNS": "300"}  # one line a broken import
    return subprocess.run([str(lint), "--no-cache"], cwd=where, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_import_contract_holds():
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def _probe(line: str) -> str:
    """`line` inside a function appended to a module: an import only a call would run."""
    return f"\n\ndef _probe():\n    {line}\n"


@pytest.mark.parametrize("module, line, shown", [
    ("__init__.py", "from kelime.service import app\n", "kelime -> kelime.service.app"),
    ("__init__.py", _probe("import kelime.service.app"), "kelime -> kelime.service.app"),
    ("normalize.py", "import msgspec\n", "kelime.normalize -> msgspec (l."),
    ("tdk/store.py", _probe("import prometheus_client"), "kelime.tdk.store -> prometheus_client"),
    ("lexicon/reader.py", _probe("from lxml import etree"), "kelime.lexicon.reader -> lxml"),
    ("tdk/shape.py", "import click\n", "kelime.tdk.shape -> click"),
    ("ranking.py", "from kelime.service import settings\n",
     "kelime.ranking -> kelime.service.settings"),
    ("games/scores.py", _probe("import kelime.crawler.run"),
     "kelime.games.scores -> kelime.crawler.run"),
    ("service/state.py", _probe("from kelime.crawler import fetch"),
     "kelime.service.state -> kelime.crawler.fetch"),
], ids=["kelime/__init__ top-level service", "kelime/__init__ function-level service",
        "top-level serve library", "function-level serve library", "function-level crawl library",
        "the command line's library", "new module imports the service",
        "new module, function-level crawler", "service to crawler"])
def test_the_import_contract_fails_on_an_upward_import(tmp_path, module, line, shown):
    copy = _contract_copy(tmp_path)
    path = copy / "kelime" / module
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(before + line, encoding="utf-8")
    done = _lint_imports(copy)
    assert done.returncode != 0
    assert shown in done.stdout, done.stdout
    assert "1 broken" in done.stdout, done.stdout  # this import, nothing else


def test_the_contract_core_is_every_module_but_the_shells():
    """What the contract checks is what the runtime test imports: kelime itself included."""
    import grimp

    from scripts.core_contract import core

    graph = grimp.build_graph("kelime", include_external_packages=True, cache_dir=None)
    assert core(graph, ["kelime"], SHELLS) == set(core_modules())
