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


@pytest.mark.parametrize("values, says", [
    ({"max_blanks": 9}, r"KELIME_MAX_BLANKS=9 must be 4 or less \(every blank multiplies"),
    ({"max_words": 0}, "KELIME_MAX_WORDS=0 must be 1 or more$"),
    ({"reports_max_bytes": 4096}, r"KELIME_REPORTS_MAX_BYTES=4096 must be 1048576 or more \("),
    ({"access_log": "yes"}, "KELIME_ACCESS_LOG='yes': use off or json"),
    ({"admin_token": "short"}, "KELIME_ADMIN_TOKEN has 5 characters: use 16 or more"),
    ({"forwarded_allow_ips": "127.0.0.1, nginx"}, "'nginx' is not an IP address or network"),
    ({"cors_origins": "https://a.example, oyun.example"},
     "KELIME_CORS_ORIGINS: 'oyun.example' is not an origin as a browser sends it"),
    ({"cors_origins": "https://oyun.example/"}, "with no path or trailing slash"),
    ({"cors_origins": "https://oyun.example?x"}, "is not an origin"),
    ({"max_header_bytes": 8192}, "Settings has no setting 'max_header_bytes'"),
    ({"max_word": 5}, "Settings has no setting 'max_word': the settings are data, cache"),
])
def test_settings_made_in_code_are_checked_too(values, says):
    """Settings(...) (create_app's, the tests') is checked as from_env is, in the same words:
    only from_env was, so a Settings made in code could hold a negative limit."""
    with pytest.raises(SettingsError, match=says):
        Settings(**values)


def test_every_problem_is_named_at_once():
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"KELIME_MAX_WORDS": "lots", "KELIME_MAX_BLANKS": "-1"})
    assert str(caught.value) == ("KELIME_MAX_WORDS='lots' is not a whole number; "
                                 "KELIME_MAX_BLANKS='-1' must be 0 or more")


def test_a_changed_copy_is_checked_again():
    settings = Settings(max_words=5)
    assert settings.changed(max_blanks=0).limits.blanks == 0
    assert settings.changed(max_blanks=0).max_words == 5
    with pytest.raises(SettingsError, match="KELIME_MAX_BLANKS=5 must be 4 or less"):
        settings.changed(max_blanks=5)
    with pytest.raises(SettingsError, match="'localhost' is not an IP address"):
        settings.trusting("localhost")


def test_settings_made_in_code_never_read_the_environment(monkeypatch):
    monkeypatch.setenv("KELIME_MAX_WORDS", "7")
    assert Settings().max_words == 10_000
    assert Settings.from_env().max_words == 7


def test_settings_are_frozen_and_hashable():
    settings = Settings()
    with pytest.raises(ValueError):
        settings.max_words = 5
    assert hash(settings) == hash(Settings()) and settings == Settings.from_env({})


def test_the_limits_the_errors_quote_are_derived_from_the_settings():
    """held_bytes and search_body_bytes (quoted in 503 and 413 messages) follow the fields."""
    small = Settings(max_exclude_words=10, max_word_chars=8, max_queued_searches=2)
    assert small.search_body_bytes == 16 * 1024 + 10 * (6 * 8 + 4)
    assert small.held_bytes == small.max_buffered_bytes + 2 * (1024 + 4 * 10 * 8) + 32 * 2**20
