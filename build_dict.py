"""`python build_dict.py ARGS` does exactly what `kelime build ARGS` does."""

import sys

from kelime.cli import cli

if __name__ == "__main__":
    cli(["build", *sys.argv[1:]], prog_name="build_dict.py")
