"""Fixtures shared by the test modules (like sqlite-utils' `fresh_db`, httpx's `server`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient, build_data


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """A data folder with two small real lexicons, `tr` and `ku` (Kurdish letters)."""
    return build_data(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def client(data_dir):
    """The real app on `data_dir`, through Starlette's TestClient."""
    with TestClient(create_app(Settings(data=data_dir))) as test_client:
        yield test_client
