"""The disk cache: generated modules and numba's compiled code, persisted across processes.

Layout under the cache root (``platformdirs`` user cache dir, ``ARRJIT_CACHE_DIR`` or
``config.update("cache_dir", ...)``)::

    <root>/<environment hash>/m_<entry hash>.py      generated module (numba ``cache=True``)
    <root>/<environment hash>/__pycache__/...        numba's index (.nbi) and code (.nbc)
    <root>/<environment hash>/native/m_<entry hash>.<function>.<types hash>
                                                      native entries (``backends.cpu.native``)
    <root>/<environment hash>/used/<entry hash>       touched on every load (LRU order)
    <root>/<environment hash>/locks/<entry hash>.lock first-compile lock (filelock)

The entry hash covers the generated source and the environment key (arrjit version and codegen
fingerprint, Python / NumPy / Numba / llvmlite versions, CPU name and features, compile flags),
because numba's own key ignores constants and some flags.

Cache entries are executable code (numba unpickles machine code from them). arrjit therefore
creates the directories private (0700) and refuses to load from a directory or file owned by
another user or writable by group/others: it warns once and runs memory-only.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..config import config, parse_size  # noqa: F401  (re-exported for the CLI and tests)

MODULE_PREFIX = "m_"
# the directories holding an entry's compiled code, each file named ``<module name>.*``
COMPILED_DIRS = ("__pycache__", "native")


class CacheWarning(UserWarning):
    """The disk cache could not be used as asked; arrjit carries on (memory-only or miss)."""


_warned: set[str] = set()


def warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(CacheWarning(message), stacklevel=3)


def root_dir() -> Path:
    configured = config.cache_dir or os.environ.get("ARRJIT_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("arrjit", appauthor=False))


def disk_enabled() -> bool:
    return not config.disable_disk_cache


def fingerprint(paths: Sequence[Path]) -> str:
    """A hash of the files that decide what a backend's generated source means (part of its
    cache key: an edit to the code generator invalidates what it generated)."""
    h = hashlib.sha256()
    for path in (*paths, Path(__file__)):
        h.update(Path(path).read_bytes())
    return h.hexdigest()[:16]


_runtime_key: dict | None = None


def environment_key(backend_fields: Mapping[str, Any]) -> dict:
    """The named parts that must match for a cached entry to be valid here: the runtime's
    (arrjit, Python, NumPy, Numba, llvmlite versions) and the backend's own fields."""
    global _runtime_key
    if _runtime_key is None:
        import llvmlite
        import numpy

        from ..version import __version__

        _runtime_key = {
            "arrjit": __version__,
            "python": sys.version,
            "numpy": numpy.__version__,
            "numba": installed_version("numba"),
            "llvmlite": llvmlite.__version__,
        }
    return {**_runtime_key, **backend_fields}


def installed_version(package: str) -> str:
    """``package``'s installed version without importing it (importing numba costs ~130 ms,
    which a process that loads only native entries never pays): the name of its dist-info
    directory, else the package metadata."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin is not None:
        site = Path(spec.origin).parent.parent
        for info_dir in site.glob(f"{package}-*.dist-info"):
            return info_dir.name[len(package) + 1:-len(".dist-info")]
    from importlib.metadata import version

    return version(package)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def environment_hash(backend_fields: Mapping[str, Any]) -> str:
    return _digest(json.dumps(environment_key(backend_fields), sort_keys=True))[:16]


def untrusted_reason(path: Path) -> str | None:
    """Why ``path`` must not be loaded from (another owner, or writable by others)."""
    st = path.stat()
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _make_private_dir(path: Path) -> None:
    existed = path.exists()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not existed:
        os.chmod(path, 0o700)


@dataclass
class EntryPaths:
    digest: str
    module_name: str
    module: Path
    lock: Path
    used: Path


class DiskCache:
    """One environment's directory. ``None`` from ``open_cache`` means memory-only."""

    def __init__(self, root: Path, env_dir: Path, key: Mapping[str, Any]):
        self.root = root
        self.env_dir = env_dir
        self.key_text = json.dumps(dict(key), sort_keys=True)
        self.counted_bytes: int | None = None   # the cache's size, kept by ``enforce_cap``

    def entry(self, source: str) -> EntryPaths:
        digest = _digest(source + self.key_text)[:32]
        name = MODULE_PREFIX + digest
        return EntryPaths(digest, name, self.env_dir / f"{name}.py",
                          self.env_dir / "locks" / f"{digest}.lock",
                          self.env_dir / "used" / digest)

    def publish(self, entry: EntryPaths, source: str) -> bool:
        """Make sure the module file holds exactly ``source``. Returns False when the disk
        cannot be used for it (after warning)."""
        data = source.encode()
        try:
            if entry.module.exists():
                reason = untrusted_reason(entry.module)
                if reason is not None:
                    warn_once(str(entry.module), _refusal(entry.module, reason))
                    return False
                if entry.module.read_bytes() == data:
                    return True
                warn_once("corrupt:" + entry.digest,
                          f"arrjit: cache entry {entry.module} was corrupt or foreign; "
                          f"recompiling it")
                self.remove_compiled(entry)
            fd, tmp = tempfile.mkstemp(dir=self.env_dir, prefix=".tmp-", suffix=".py")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o600)
            os.replace(tmp, entry.module)
            return True
        except OSError as err:
            warn_once("write:" + str(self.env_dir),
                      f"arrjit: cannot write the disk cache at {self.env_dir} ({err}); "
                      f"running memory-only")
            return False

    def remove_compiled(self, entry: EntryPaths) -> None:
        """Delete numba's files and the native entries for this entry (they are rebuilt on
        the next compile)."""
        for directory in (self.env_dir / sub for sub in COMPILED_DIRS):
            if directory.is_dir():
                for f in directory.glob(entry.module_name + ".*"):
                    f.unlink(missing_ok=True)

    def native_entry(self, entry: EntryPaths, function: str, types_key: str) -> Path:
        """Where the native entry of ``function`` for the argument types ``types_key``
        (``native.abi.signature_key``) is stored."""
        return self.env_dir / "native" / f"{entry.module_name}.{function}.{_digest(types_key)[:16]}"

    def touch(self, entry: EntryPaths) -> None:
        try:
            entry.used.parent.mkdir(mode=0o700, exist_ok=True)
            entry.used.touch()
        except OSError:
            pass


def _refusal(path: Path, reason: str) -> str:
    return (f"arrjit: not using the disk cache at {path}: it is {reason}. Cache entries are "
            f"executable code, so arrjit only loads them from a private directory. Fix: "
            f"chmod 700 {path} and make sure you own it, or remove it, or set ARRJIT_CACHE_DIR "
            f"to a private directory. Running memory-only.")


_opened: dict[tuple[str, str], DiskCache | None] = {}


def open_cache(backend_fields: Mapping[str, Any]) -> DiskCache | None:
    """The disk cache for this environment and backend, or None (disabled, untrusted or
    unwritable)."""
    if not disk_enabled():
        return None
    root = root_dir()
    env_hash = environment_hash(backend_fields)
    key = str(root)
    if (key, env_hash) in _opened:
        return _opened[key, env_hash]
    cache = None
    try:
        _make_private_dir(root)
        reason = untrusted_reason(root)
        env_dir = root / env_hash
        if reason is None:
            _make_private_dir(env_dir)
            reason = untrusted_reason(env_dir)
            if reason is None:
                for sub in ("locks", "used", *COMPILED_DIRS):
                    p = env_dir / sub
                    if p.exists() and untrusted_reason(p):
                        reason = untrusted_reason(p)
                        env_dir = p
                        break
            else:
                root = env_dir
        if reason is not None:
            warn_once(key, _refusal(env_dir if env_dir.exists() else root, reason))
        else:
            (env_dir / "locks").mkdir(mode=0o700, exist_ok=True)
            cache = DiskCache(root, env_dir, environment_key(backend_fields))
    except OSError as err:
        warn_once(key, f"arrjit: cannot use the disk cache at {root} ({err}); running "
                       f"memory-only")
    _opened[key, env_hash] = cache
    return cache


def forget_opened() -> None:
    """Re-read the cache location and permissions on next use (after a config change)."""
    _opened.clear()


# -- inspection and maintenance (``python -m arrjit cache ...``) ------------------------------
def _entries(env_dir: Path) -> list[tuple[float, str, list[Path]]]:
    """(last use, name, files) for every module entry in an environment directory. Each
    directory is listed once (a listing per entry made a prune quadratic in the entries)."""
    compiled = [_files_by_stem(env_dir / sub) for sub in COMPILED_DIRS]
    used = _files_by_stem(env_dir / "used")
    locks = _files_by_stem(env_dir / "locks")
    out = []
    for module in env_dir.glob(MODULE_PREFIX + "*.py"):
        name = module.stem
        digest = name[len(MODULE_PREFIX):]
        last_used = used.get(digest, [])
        files = [module, *(f for by_stem in compiled for f in by_stem.get(name, [])),
                 *last_used, *locks.get(digest, [])]
        out.append(((last_used[0] if last_used else module).stat().st_mtime, name, files))
    return sorted(out)


def _all_entries(root: Path) -> list[tuple[float, str, list[Path]]]:
    """``_entries`` of every environment directory under ``root``, least recently used
    first."""
    envs = [d for d in root.iterdir() if d.is_dir()] if root.exists() else []
    return sorted(e for env_dir in envs for e in _entries(env_dir))


def _files_by_stem(directory: Path) -> dict[str, list[Path]]:
    """The files of ``directory`` grouped by their name up to the first dot."""
    grouped: dict[str, list[Path]] = {}
    try:
        with os.scandir(directory) as it:
            for item in it:
                grouped.setdefault(item.name.split(".", 1)[0], []).append(Path(item.path))
    except OSError:
        pass
    return grouped


def _size(paths) -> int:
    total = 0
    for p in paths:
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total


def info(root: Path | None = None) -> dict:
    root = root or root_dir()
    kinds = {"modules": 0, "numba_index": 0, "numba_code": 0, "native": 0, "other": 0}
    total = 0
    if root.exists():
        for p in root.rglob("*"):
            if not p.is_file():
                continue
            total += p.stat().st_size
            if p.suffix == ".py":
                kinds["modules"] += 1
            elif p.suffix == ".nbi":
                kinds["numba_index"] += 1
            elif p.suffix == ".nbc":
                kinds["numba_code"] += 1
            elif p.parent.name == "native":
                kinds["native"] += 1
            else:
                kinds["other"] += 1
    return {"path": str(root), "entries": kinds["modules"], "bytes": total, "kinds": kinds,
            "max_size": config.cache_max_size}


def clear(root: Path | None = None) -> int:
    """Remove every cached entry; returns the number of environment directories removed."""
    root = root or root_dir()
    removed = 0
    if root.exists():
        for child in root.iterdir():
            if child.is_dir() and re.fullmatch(r"[0-9a-f]{16}", child.name):
                shutil.rmtree(child, ignore_errors=True)
                removed += 1
    forget_opened()
    return removed


def prune(max_size: int, root: Path | None = None) -> tuple[int, int]:
    """Evict least recently used entries until the cache holds at most ``max_size`` bytes.
    Returns (entries removed, bytes now)."""
    root = root or root_dir()
    if not root.exists():
        return 0, 0
    entries = _all_entries(root)
    total = sum(_size(files) for _, _, files in entries)
    removed = 0
    for _, _, files in entries:
        if total <= max_size:
            break
        total -= _size(files)
        for f in files:
            try:
                f.unlink()
            except OSError:
                pass
        removed += 1
    return removed, total


def enforce_cap(cache: DiskCache, entry: EntryPaths) -> None:
    """Keep the cache under ``config.cache_max_size`` bytes once ``entry`` has been compiled.

    The size is counted in full on a process's first compile and after each eviction, and in
    between by adding each new entry's files: a prune on every compile listed and stat-ed the
    whole cache, a cost that grew with it (3.5 of the test suite's 13 CPU minutes were system
    time). Entries other processes add meanwhile are counted at the next full count."""
    cap = config.cache_max_size
    if not cap or cap <= 0:
        return
    if cache.counted_bytes is None:
        cache.counted_bytes = sum(_size(files) for _, _, files in _all_entries(cache.root))
    else:
        files = [entry.module, entry.used, entry.lock,
                 *(f for sub in COMPILED_DIRS
                   for f in _files_by_stem(cache.env_dir / sub).get(entry.module_name, []))]
        cache.counted_bytes += _size(files)
    if cache.counted_bytes > cap:
        cache.counted_bytes = prune(cap, cache.root)[1]
