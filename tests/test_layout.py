"""The layout is the architecture: the core (`kelime` minus its shells) imports no shell and
no shell library, `kelime define` loads no Scrapy, and a built wheel installed outside the
checkout carries the policy and adds no generic top-level name to site-packages."""

from __future__ import annotations

import json
import os
import pkgutil
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import sqlite_utils

import kelime

ROOT = Path(__file__).resolve().parents[1]
SHELLS = ("kelime.cli", "kelime.crawler", "kelime.service")
FORBIDDEN = ("scrapy", "twisted", "fastapi", "starlette", "uvicorn", "click", "rich", "httpx",
             "crawler", "service", *SHELLS)


def core_modules() -> list[str]:
    """Every module of the kelime package outside the shells."""
    found = ["kelime"]
    for info in pkgutil.walk_packages(kelime.__path__, "kelime."):
        if not info.name.startswith(SHELLS):
            found.append(info.name)
    return sorted(found)


def loaded_after(python: str, module: str, cwd: Path | None = None) -> list[str]:
    """The top-level and kelime.* modules a fresh interpreter holds after importing `module`."""
    code = (f"import json, sys; import {module}; "
            "print(json.dumps(sorted(m for m in sys.modules)))")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=cwd,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def leaks(modules: list[str]) -> list[str]:
    return [m for m in modules if m in FORBIDDEN or m.startswith(tuple(f + "." for f in FORBIDDEN))]


def test_the_core_has_modules_to_check():
    names = core_modules()
    assert {"kelime.lexicon.format", "kelime.tdk.store", "kelime.policy"} <= set(names)
    assert not any(n.startswith(SHELLS) for n in names)


@pytest.fixture(scope="module")
def storage_baseline() -> set[str]:
    """What sqlite-utils (the crawl store's library) loads by itself: it imports click for its
    own command line. Those modules are the library's, not a shell the core reaches for."""
    return set(loaded_after(sys.executable, "sqlite_utils"))


@pytest.mark.parametrize("module", core_modules())
def test_core_module_imports_no_shell(module, storage_baseline):
    loaded = loaded_after(sys.executable, module)
    allowed = storage_baseline if "sqlite_utils" in loaded else set()
    assert [m for m in leaks(loaded) if m not in allowed] == []
    assert not [m for m in loaded if m.startswith(SHELLS)]


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
def installed(tmp_path_factory) -> Path:
    """A fresh venv holding only the built wheel; its dependencies come from this test's
    environment through a .pth line (which does not bring this checkout's editable install)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = _copy_sources(tmp / "src")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                            str(tmp / "dist"), str(src)], capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp / "dist").glob("kelime-*.whl")
    env_dir = tmp / "venv"
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
    assert leaks(where) == []
    origin = subprocess.run([str(installed / "bin" / "python"), "-c",
                             "import kelime; print(kelime.__file__)"], cwd=tmp_path,
                            capture_output=True, text=True).stdout
    assert str(installed) in origin and str(ROOT) not in origin


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
    """kelime's sources (the shells' links followed) and pyproject.toml, to edit and check."""
    shutil.copytree(ROOT / "kelime", dest / "kelime",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def _lint_imports(where: Path) -> subprocess.CompletedProcess:
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    env = {**os.environ, "PYTHONPATH": str(where)}  # the copy, before the editable install
    return subprocess.run([str(lint), "--no-cache"], cwd=where, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_import_contract_holds():
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize("module, line, shown", [
    ("tdk/store.py", "import click\n", "kelime.tdk.store -> click"),
    ("normalize.py", "\n\ndef _probe():\n    from kelime.service import settings\n"
     "    return settings\n", "kelime.normalize -> kelime.service.settings"),
    ("lexicon/reader.py", "\n\ndef _probe():\n    import kelime.crawler.run\n",
     "kelime.lexicon.reader -> kelime.crawler.run"),
    ("service/state.py", "\n\ndef _probe():\n    from kelime.crawler import fetch\n",
     "kelime.service.state -> kelime.crawler.fetch"),
], ids=["top-level library", "function-level service", "function-level crawler",
        "service to crawler"])
def test_the_import_contract_fails_on_an_upward_import(tmp_path, module, line, shown):
    copy = _contract_copy(tmp_path)
    path = copy / "kelime" / module
    path.write_text(path.read_text(encoding="utf-8") + line, encoding="utf-8")
    done = _lint_imports(copy)
    assert done.returncode != 0
    assert shown in done.stdout, done.stdout


def test_the_contract_covers_every_core_module():
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (core,) = [c for c in contracts["contracts"] if c["id"] == "core"]
    covered = tuple(core["source_modules"])
    missing = [m for m in core_modules() if m != "kelime" and not
               (m in covered or m.startswith(tuple(c + "." for c in covered)))]
    assert missing == [], f"add {missing} to the core contract's source_modules"
