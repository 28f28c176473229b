"""service.settings: one frozen object, read from a given environment mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from kelime.service.settings import Settings, SettingsError


def test_defaults_when_nothing_is_set():
    assert Settings.from_env({}) == Settings()
    assert Settings().data == Path("data") and Settings().cache is None
    assert (Settings().max_words, Settings().max_word_chars, Settings().max_body_bytes) == (
        10_000, 64, 4 * 1024 * 1024)
    assert (Settings().max_get_words, Settings().max_query_bytes) == (1_000, 32 * 1024)


def test_values_from_the_environment():
    settings = Settings.from_env({"KELIME_DATA": "/srv/lex", "KELIME_CACHE": "/srv/tdk.sqlite",
                                  "KELIME_MAX_WORDS": " 500 ", "KELIME_DEFAULT_LEXICON": "ku",
                                  "KELIME_CACHE_MAX_AGE": "0", "KELIME_MAX_BODY_BYTES": "",
                                  "KELIME_MAX_GET_WORDS": "100", "KELIME_MAX_QUERY_BYTES": "4096"})
    assert settings == Settings(data=Path("/srv/lex"), cache=Path("/srv/tdk.sqlite"),
                                max_words=500, default_lexicon="ku", cache_max_age=0,
                                max_get_words=100, max_query_bytes=4096)


@pytest.mark.parametrize("env, says", [
    ({"KELIME_MAX_WORDS": "lots"}, "KELIME_MAX_WORDS='lots' is not a whole number"),
    ({"KELIME_MAX_WORD_CHARS": "0"}, "KELIME_MAX_WORD_CHARS='0' must be 1 or more"),
    ({"KELIME_CACHE_MAX_AGE": "-1"}, "must be 0 or more"),
    ({"KELIME_MAX_QUERY_BYTES": "70000"}, "must be 61440 or less .the HTTP server refuses URLs"),
])
def test_bad_values_say_which_variable(env, says):
    with pytest.raises(SettingsError, match=says):
        Settings.from_env(env)


def test_as_env_round_trips_with_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = Settings(data=Path("lexicons"), cache=Path("tdk.sqlite"), max_words=7)
    env = settings.as_env()
    assert env["KELIME_DATA"] == str(tmp_path / "lexicons")
    assert "KELIME_CACHE" in env and Settings.from_env(env) == Settings(
        data=tmp_path / "lexicons", cache=tmp_path / "tdk.sqlite", max_words=7)
    assert "KELIME_CACHE" not in Settings().as_env()


def test_flags_give_new_settings_and_leave_the_environment_ones_alone():
    base = Settings.from_env({"KELIME_DATA": "/srv/a", "KELIME_MAX_WORDS": "5"})
    changed = base.with_data("/srv/b").with_cache("/srv/tdk.sqlite")
    assert (changed.data, changed.cache, changed.max_words) == \
        (Path("/srv/b"), Path("/srv/tdk.sqlite"), 5)
    assert (base.data, base.cache) == (Path("/srv/a"), None)
