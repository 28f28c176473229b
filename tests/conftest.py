"""Fixtures shared by the test modules (like sqlite-utils' `fresh_db`, httpx's `server`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient, build_data, build_offline

#: The variables a developer may have exported for a server of theirs (README): no test may
#: read them, or it would use (and change) that server's store, cache or data.
USER_SETTINGS = ("KELIME_DATA", "KELIME_CACHE", "KELIME_REPORTS", "KELIME_TDK_BASE_URL",
                 "KELIME_GAMES", "KELIME_DEFAULT_LEXICON", "KELIME_ADMIN_TOKEN")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with the most `slow` tests first, each file's tests in their order: spread
    over the cores a file at a time (`make test`), the long files start at once instead of
    leaving one core alone with the last of them."""
    def slow_tests(item: pytest.Item) -> int:
        return slow[item.path]

    slow: dict[Path, int] = {}
    for item in items:
        slow[item.path] = slow.get(item.path, 0) + (item.get_closest_marker("slow") is not None)
    items.sort(key=slow_tests, reverse=True)  # stable: a file's own order is kept


@pytest.fixture(autouse=True)
def no_user_settings(monkeypatch):
    for var in USER_SETTINGS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """A data folder with two small real lexicons, `tr` and `ku` (Kurdish letters)."""
    return build_data(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def offline_lexicons(tmp_path_factory) -> Path:
    """The offline lexicons `make serve` builds (`kelime build --bootstrap`: tr and ku),
    built once per session (once per xdist worker) and shared by every test that reads
    them: none may change them (a test that does works on `copy_data(offline_lexicons, …)`)."""
    return build_offline(tmp_path_factory.mktemp("offline") / "data")


@pytest.fixture(scope="module")
def client(data_dir):
    """The real app on `data_dir`, through Starlette's TestClient."""
    with TestClient(create_app(Settings(data=data_dir))) as test_client:
        yield test_client
