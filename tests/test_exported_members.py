"""kelime's public surface is what `kelime/__init__.py` lists (like httpx's own test)."""

import kelime
from kelime import errors


def test_all_names_are_exported_and_nothing_else_is_promised():
    public = {name for name in dir(kelime) if not name.startswith("_")}
    assert set(kelime.__all__) <= public
    modules = {"anagram", "cli", "crawler", "errors", "games", "lexicon", "locks", "normalize",
               "policy", "reports", "reports_accept", "sqlite",
               "service", "sources", "suggest", "tdk"}
    assert public - set(kelime.__all__) <= modules


def test_every_error_is_a_kelime_error():
    tree = [getattr(errors, n) for n in dir(errors) if n.endswith(("Error", "Lexicon"))]
    assert len(tree) >= 9
    assert all(issubclass(cls, errors.KelimeError) for cls in tree)
    assert issubclass(errors.PolicyError, errors.BuildError)
    assert issubclass(errors.OutdatedLexicon, errors.LexiconError)
