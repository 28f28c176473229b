"""The examples in the service modules' docstrings hold."""

from __future__ import annotations

import doctest

import pytest

from service import parse, responses, settings


@pytest.mark.parametrize("module", [parse, responses, settings], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
