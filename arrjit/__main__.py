"""Command line: ``python -m arrjit demo``."""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arrjit",
                                     description="arrjit: a JAX-style array JIT on Numba")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run the jit tutorial story and a speed table")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from . import demo

        demo.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
