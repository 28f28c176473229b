"""kelime: the Turkish word-game dictionary. The pure core lives in this package:
normalize, games, lexicon, build, sources, filters; the shells are crawler/, service/, cli."""
