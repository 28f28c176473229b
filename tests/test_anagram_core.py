"""The anagram core imports no shell: checked in a fresh interpreter, module by module."""

from __future__ import annotations

import doctest
import importlib
import json
import subprocess
import sys

import pytest

CORE = ["kelime.anagram", "kelime.anagram.brute", "kelime.anagram.split", "kelime.games"]
SHELLS = ("fastapi", "starlette", "uvicorn", "click", "rich", "httpx", "scrapy", "twisted",
          "service", "crawler", "kelime.cli")


@pytest.mark.parametrize("module", CORE)
def test_imports_no_shell(module):
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True).stdout)
    assert [m for m in loaded if m.split(".")[0] in SHELLS or m.startswith(SHELLS)] == []


def test_the_public_surface():
    from kelime import anagram

    assert sorted(anagram.__all__) == sorted(
        ["AnagramError", "AnagramIndex", "Answer", "Hit", "INDEX_FILE", "IndexFormatError",
         "Laid", "Limits", "OptionError", "OverLimit", "Pattern", "PatternError", "Query",
         "Rack", "RackError", "RackNotDealt", "Split", "anagram", "build_index", "make_query", "parse_exclude",
         "parse_pattern", "parse_rack", "search", "split"])
    assert all(hasattr(anagram, name) for name in anagram.__all__)


@pytest.mark.parametrize("module", [
    "kelime.anagram", "kelime.anagram.bits", "kelime.anagram.index", "kelime.anagram.plan",
    "kelime.anagram.query", "kelime.anagram.rack", "kelime.anagram.search",
    "kelime.anagram.tiles", "kelime.anagram.usages", "kelime.games", "kelime.games.profile"])
def test_the_documented_examples(module):
    tried = doctest.testmod(importlib.import_module(module))
    assert tried.attempted and not tried.failed
