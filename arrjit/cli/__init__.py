"""The command line: ``python -m arrjit demo | cache info | cache clear | cache prune --max-size``."""
from __future__ import annotations

import argparse


def _size(text: str) -> int:
    """A ``--max-size`` value; a bad one is a usage error, not a traceback."""
    from ..config import parse_size

    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _cache_command(args) -> int:
    from pathlib import Path

    from ..runtime import cache

    if args.action == "info":
        info = cache.info()
        kinds = ", ".join(f"{k} {v}" for k, v in info["kinds"].items())
        missing = "" if Path(info["path"]).exists() else " (does not exist: nothing is cached yet)"
        print(f"path:     {info['path']}{missing}")
        print(f"entries:  {info['entries']}")
        print(f"bytes:    {info['bytes']} ({info['bytes'] / 2**20:.1f} MiB, cap "
              f"{info['max_size'] / 2**20:.0f} MiB)")
        print(f"files:    {kinds}")
    elif args.action == "clear":
        removed = cache.clear()
        print(f"removed {removed} environment folder(s) from {cache.root_dir()}")
    else:
        removed, remaining = cache.prune(args.max_size)
        print(f"evicted {removed} entr{'y' if removed == 1 else 'ies'}; {remaining} bytes remain "
              f"in {cache.root_dir()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arrjit",
                                     description="arrjit: a JAX-style array JIT on Numba")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run the jit tutorial story and a speed table")
    bench = commands.add_parser("bench", help="benchmark against NumPy, numexpr, numba, JAX")
    bench.add_argument("--quick", action="store_true", help="small sizes, fewer rounds")
    bench.add_argument("--plot", metavar="FILE.png", help="write a grouped bar chart")
    bench.add_argument("--json", metavar="FILE", help="write the results as JSON")
    bench.add_argument("--first-call", action="store_true",
                       help="first-call latency in fresh processes: arrjit cold / from the disk "
                            "cache vs JAX")
    cache_parser = commands.add_parser("cache", help="inspect or clean the disk cache")
    actions = cache_parser.add_subparsers(dest="action", required=True)
    actions.add_parser("info", help="path, entries, bytes and file kinds")
    actions.add_parser("clear", help="remove every cached entry")
    prune = actions.add_parser("prune", help="evict least recently used entries")
    prune.add_argument("--max-size", required=True, type=_size, help="e.g. 500MB, 2GB")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from . import demo

        demo.run()
        return 0
    if args.command == "bench":
        from . import bench

        bench.main(args.quick, args.plot, args.json, args.first_call)
        return 0
    return _cache_command(args)

