"""`python build_dict.py ARGS` does exactly what `kelime build ARGS` does.

Its --help and its errors print `Usage: python build_dict.py build [OPTIONS]` (click names
the group and the command), so that usage works when followed: a leading `build` is the
command's name, not an argument."""

import sys

from kelime.cli import cli

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["build"]:
        args = args[1:]
    cli(["build", *args], prog_name="python build_dict.py")
