"""Helpers for the service tests: two small real lexicons; the servers (a real uvicorn in a
thread, like httpx's tests/conftest.py::serve_in_thread, and `kelime serve` processes) are
in tests/servers.py, reachable through here too. The fixtures built from them (`data_dir`,
`client`) live in tests/conftest.py."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

with warnings.catch_warnings():  # Starlette 1.x asks for `httpx2`; httpx works the same here
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient  # noqa: F401 - for the tests, through here

from kelime.lexicon import Candidate, compile_words, write_lexicon
from kelime.normalize import Alphabet
from kelime.service.app import create_app  # noqa: F401 - for the tests, through here
from tests.servers import serve_in_thread, stop, wait_ready  # noqa: F401 - through here

KURDISH = Alphabet("abcçdeêfghiîjklmnopqrsştuûvwxyz")
TR_WORDS = [
    Candidate("kitap"), Candidate("ev"), Candidate("abdal"), Candidate("Abdal", "proper_name"),
    Candidate("İstanbul", "proper_name"), Candidate("göt", "obscene"), Candidate("ılık"),
    Candidate("ilik"), Candidate("iğne"), Candidate("katil"), Candidate("at"),
    Candidate("dulda tutmak"),
]
KU_WORDS = [Candidate(w) for w in ("av", "nan", "mêr", "şîr", "xwe", "jin")]
SOURCE = {"kind": "test", "name": "tests/service_helpers.py", "licence": "n/a"}
CREATED = "2026-01-01T00:00:00Z"


def build_data(root: Path) -> Path:
    """A data folder with lexicons `tr` (Turkish) and `ku` (Kurdish, its own alphabet)."""
    write_lexicon(compile_words(TR_WORDS), root, "tr", SOURCE, created=CREATED)
    write_lexicon(compile_words(KU_WORDS, KURDISH), root, "ku", SOURCE, created=CREATED,
                  alphabet=KURDISH)
    return root


def build_offline(out: Path) -> Path:
    """The offline lexicons `tr` and `ku` in `out`, as `make serve` builds them (none of
    the caller's KELIME_* or SOURCE_DATE_EPOCH)."""
    from click.testing import CliRunner

    from kelime.cli import cli

    unset = {k: None for k in os.environ if k.startswith("KELIME_") or k == "SOURCE_DATE_EPOCH"}
    for args in ([], ["--name", "ku"]):
        run = CliRunner(env=unset).invoke(cli, ["build", "--bootstrap", *args, "--out", str(out)])
        assert run.exit_code == 0, run.output
    return out


def copy_data(data: Path, to: Path) -> Path:
    """A copy of the data folder `data` at `to` (its links kept as links), for a test that
    changes it: copying built lexicons is much cheaper than building them again."""
    shutil.copytree(data, to, symlinks=True)
    return to
