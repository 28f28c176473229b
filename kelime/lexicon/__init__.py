"""Lexicons: the format on disk (`format`), the pure compile (`compile`), the write
(`write`, the only part that touches the disk), loading and verdicts (`reader`), and
finding lexicons in a data folder (`folder`)."""

from ..errors import BuildError, LexiconError
from .compile import Candidate, Compiled, compile_words, created_stamp, diff_words
from .folder import (
                     DEFAULT_LEXICON,
                     current_builds,
                     held,
                     hold,
                     lexicon_names,
                     load_all,
                     load_lexicon,
                     load_named,
)
from .format import DATA_FILES, FORMAT_VERSION, MANIFEST_FILE, REASONS, Manifest
from .reader import Lexicon, Verdict
from .write import BuildResult, write_lexicon

__all__ = [
                     "DATA_FILES",
                     "DEFAULT_LEXICON",
                     "FORMAT_VERSION",
                     "MANIFEST_FILE",
                     "REASONS",
                     "BuildError",
                     "BuildResult",
                     "Candidate",
                     "Compiled",
                     "Lexicon",
                     "LexiconError",
                     "Manifest",
                     "Verdict",
                     "compile_words",
                     "created_stamp",
                     "current_builds",
                     "diff_words",
                     "held",
                     "hold",
                     "lexicon_names",
                     "load_all",
                     "load_lexicon",
                     "load_named",
                     "write_lexicon",
]
