"""A client generated from /openapi.json works: openapi-python-client (what a game server's
developer would run) makes a Python package from a live server's schema without a warning,
and its typed functions and models validate, find anagrams, split a hand and pin a lexicon
version against that real server (uvicorn)."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import serve_in_thread

PACKAGE = "kelime_api_client"


def generator() -> str:
    found = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("openapi-python-client is not installed (pip install -e '.[dev]')")
    return found


@pytest.fixture(scope="module")
def generated(data_dir, tmp_path_factory):
    """(the server's URL, the generated package imported)."""
    cli = generator()
    folder = tmp_path_factory.mktemp("client")
    with serve_in_thread(create_app(Settings(data=data_dir))) as url:
        (folder / "openapi.json").write_bytes(httpx.get(f"{url}/openapi.json", timeout=60).content)
        (folder / "config.yaml").write_text("post_hooks: []\n")  # no ruff run on the output
        run = subprocess.run([cli, "generate", "--path", "openapi.json", "--output-path",
                              PACKAGE, "--meta", "none", "--config", "config.yaml"],
                             cwd=folder, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "warning" not in (run.stdout + run.stderr).lower(), run.stdout + run.stderr
        sys.path.insert(0, str(folder))
        try:
            yield url, importlib.import_module(PACKAGE)
        finally:
            sys.path.remove(str(folder))
            for name in [n for n in sys.modules if n.split(".")[0] == PACKAGE]:
                del sys.modules[name]


def module(name: str):
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_a_generated_client_validates_finds_anagrams_and_splits(generated):
    url, client_package = generated
    models = module("models")
    validate = module("api.validate.validate_words")
    anagram = module("api.anagram.find_anagrams")
    split = module("api.anagram.split_rack")
    client = client_package.Client(base_url=url, timeout=httpx.Timeout(60))

    checked = validate.sync(client=client, body=models.ValidateRequest(words=["kitap", "göt"]))
    assert isinstance(checked, models.ValidateReply)
    assert [r.valid for r in checked.results] == [True, False]
    assert checked.results[1].reason.value == "obscene"
    assert checked.lexicon.name == "tr"

    found = anagram.sync(client=client, body=models.AnagramRequest(rack="kitap?"))
    assert isinstance(found, models.AnagramReply)
    assert "kitap" in [w.word for w in found.words] and found.count >= 1

    hand = split.sync(client=client, body=models.SplitRequest(rack="kitapılık", what_if=True))
    assert isinstance(hand, models.SplitReply)
    assert hand.found and sorted(w.word for w in hand.words) == ["kitap", "ılık"]
    dealt = split.sync(client=client, body=models.SplitRequest(rack="kitapılık"))
    assert isinstance(dealt, models.Error)  # 9 tiles: no Harfbank hand
    assert dealt.error.code == models.ErrorErrorCode.RACK_NOT_DEALT

    refused = validate.sync(client=client, body=models.ValidateRequest(words=["ev"],
                                                                       game="scrabble"))
    assert isinstance(refused, models.Error)  # the error shape, its code an enum member
    assert refused.error.code == models.ErrorErrorCode.UNKNOWN_GAME


def test_a_generated_client_pins_the_version_the_catalog_lists(generated):
    url, client_package = generated
    models = module("models")
    validate = module("api.validate.validate_words")
    catalog = module("api.catalog.list_lexicons")
    client = client_package.Client(base_url=url, timeout=httpx.Timeout(60))

    listed = catalog.sync(client=client)
    assert isinstance(listed, models.LexiconsReply)
    (tr,) = [lex for lex in listed.lexicons if lex.name == "tr"]
    assert [(b.version, b.current) for b in tr.held] == [(tr.version, True)]
    pinned = validate.sync(client=client, body=models.ValidateRequest(
        words=["kitap"], lexicon=f"tr@{tr.version}"))
    assert isinstance(pinned, models.ValidateReply), pinned
    assert pinned.lexicon.version == tr.version and pinned.results[0].valid
    gone = validate.sync(client=client, body=models.ValidateRequest(
        words=["kitap"], lexicon="tr@0123456789ab"))
    assert isinstance(gone, models.Error)
    assert gone.error.code == models.ErrorErrorCode.UNKNOWN_VERSION
