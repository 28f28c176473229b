"""The offline Turkish lexicon against TDK's own headword list (2026-01): at least 98% of
its words are TDK headwords, it knows at least 60% of them, and 95% of the 1,000 most
frequent ones (wordfreq's list); and few of TDK's lower-case headwords are refused as proper
names (73 before the homograph rule, 16 of them among the 5,000 most frequent; 34 and 5
after). Skipped without the sample, which lives beside the repository, not in it.

    pytest -s tests/test_lexicon_quality.py     # prints the figures"""

from __future__ import annotations

from pathlib import Path

import pytest

from kelime.lexicon import compile_words
from kelime.policy import apply_policy, load_policy
from kelime.sources import offline_lexicon
from kelime.sources.quality import frequent_headwords, headwords, score

SAMPLE = (Path(__file__).resolve().parents[2] / "shared" / "tdk-samples"
          / "autocomplete-v12-2026-01.json")


@pytest.fixture(scope="module")
def measured():
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} is absent (the shared TDK samples live beside the repository)")
    pytest.importorskip("wordfreq")
    reference = headwords(SAMPLE)
    made = offline_lexicon()
    compiled, _ = apply_policy(compile_words(made.candidates()), load_policy())
    figures = score(set(compiled.words), reference, frequent_headwords(reference, 1000))
    names = {w for w, why in compiled.rejected.items() if why == "proper_name"} & reference
    figures["refused_as_names"] = len(names)
    figures["frequent_refused_as_names"] = sorted(names & set(frequent_headwords(reference,
                                                                                  5000)))
    print(f"\noffline tr ({' + '.join(s.key for s in made.lists)}, {made.need} must agree): "
          f"{figures}")
    return figures


def test_precision(measured):
    assert measured["precision"] >= 0.98


def test_recall(measured):
    assert measured["recall"] >= 0.60
    assert measured["frequent_recall"] >= 0.95


def test_few_common_words_are_refused_as_names(measured):
    """yağış, dönüş, kurtuluş … were refused as proper names: NlpToolkit lists the surnames."""
    assert measured["refused_as_names"] <= 40
    assert len(measured["frequent_refused_as_names"]) <= 6
