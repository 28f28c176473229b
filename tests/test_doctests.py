"""The examples in the modules' docstrings hold, in the core and in the shells."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import kelime
import kelime.crawler
import kelime.service


def modules_with_examples() -> list[str]:
    names = ["kelime"]
    for package in (kelime, kelime.crawler, kelime.service):  # the shells install inside kelime
        names += [i.name for i in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    names = sorted(set(names))
    return [n for n in names if ">>>" in inspect.getsource(importlib.import_module(n))]


def test_the_examples_cover_core_and_shells():
    names = modules_with_examples()
    assert {"kelime.normalize", "kelime.service.parse", "kelime.tdk.replies"} <= set(names)


@pytest.mark.parametrize("name", modules_with_examples())
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
