"""A client's huge number (JSON's ``1e300`` arrives as a whole number of 301 digits) is
named by its size in an error, never written out digit by digit."""

from __future__ import annotations

import pytest

from kelime.errors import excerpt, number
from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient
from tests.test_service_anagram import make_data


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with TestClient(create_app(Settings(data=make_data(tmp_path_factory.mktemp("data"))))) as c:
        yield c


@pytest.mark.parametrize(("value", "shown"), [
    (5000, "5000"), (-7, "-7"), (2**128 - 1, str(2**128 - 1)),
    (10**300, "≈10^300"), (-(10**300), "≈-10^300"), (10**5000, "≈10^5000")],
    ids=["small", "negative", "128 bits", "1e300", "-1e300", "over Python's 4,300 digits"])
def test_a_number_is_itself_or_its_size(value, shown):
    assert number(value) == shown


def test_an_excerpt_of_a_huge_number_is_its_size_and_of_a_bool_is_itself():
    assert excerpt(-(10**300)) == "≈-10^300"
    assert excerpt(True) == "'True'"
    assert excerpt(12) == "'12'"


@pytest.mark.parametrize(("limit", "status", "shown"), [
    (b"1e300", 413, "limit ≈10^300 is over the limit of"),
    (b"-1e300", 422, "not ≈-10^300"),
    (b"5000", 413, "limit 5000 is over the limit of")])
def test_a_huge_limit_is_refused_in_a_line(api, limit, status, shown):
    reply = api.post("/v1/anagram", content=b'{"rack": "kale?", "limit": %s}' % limit,
                     headers={"Content-Type": "application/json"})
    assert reply.status_code == status
    message = reply.json()["error"]["message"]
    assert shown in message
    assert len(message) < 200, message
