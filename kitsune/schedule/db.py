"""The tuning database: winners of ``kitsune-tune``, keyed by template, problem (shapes, element size) and GPU.

Two JSON files are read, the user's first: ``$KITSUNE_CACHE_DIR/tuning.json``
(default ``~/.cache/kitsune/tuning.json``, written by ``kitsune-tune``) and the
database that ships with the package (``kitsune/schedule/tuned.json``, the suite
tuned on the H100). ``KITSUNE_TUNING_DB=0`` switches both off (heuristic
defaults only: how "no tuning to the benchmark" is checked).

An entry: ``{"<gpu>|<template>|<problem key>": {"config": {...}, "ms": t, "default_ms": t0, "date": ...}}``;
a program's dataflow placement: ``{"<gpu>|placement|<graph hash>": {"placement": p, "ms": {p: t, ...}, ...}}``;
a program's kernel launch (programmatic dependent launch: 0 off, 1 the next kernel launched once every program of
this one started, 2 once each did its work): ``{"<gpu>|launch|<mode>|<graph hash>": {"pdl": p, "us": {p: t}}}``.

A lookup reads the GPU's own entries first, then those of its twins (``GPU.tuning_twins``: the same die, e.g. an
H200 reads the H100's where it has none of its own); writes always go under the GPU's own name.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import replace
from pathlib import Path

from kitsune.gpu import GPU, get_gpu

PACKAGED = Path(__file__).with_name("tuned.json")
_lock = threading.Lock()
_cache: dict[str, tuple[float, dict]] = {}


def user_path() -> Path:
    base = os.environ.get("KITSUNE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kitsune")
    return Path(base) / "tuning.json"


def enabled() -> bool:
    return os.environ.get("KITSUNE_TUNING_DB", "1") not in ("0", "off", "false", "no")


def key(problem, gpu: GPU | str) -> str:
    return f"{get_gpu(gpu).name}|{problem.template}|{problem.key()}"


def _read(path: Path) -> dict:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return {}
    with _lock:
        hit = _cache.get(str(path))
        if hit and hit[0] == mtime:
            return hit[1]
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    with _lock:
        _cache[str(path)] = (mtime, data)
    return data


def fingerprint() -> tuple:
    """What the lookups read: whether tuning is on, and each database file's path and modification time (a
    lowering cache keys on it, so that a changed database lowers again)."""
    out: list = [enabled()]
    for path in (user_path(), PACKAGED):
        try:
            out.append((str(path), path.stat().st_mtime_ns))
        except OSError:
            out.append((str(path), None))
    return tuple(out)


def lookup(problem, gpu: GPU | str, path: Path | None = None):
    """The tuned config of ``problem`` on ``gpu``, or None. ``path``: a database file searched before the user's
    and the packaged ones (``kitsune-tune --db``: its own earlier winners stay in the race)."""
    from kitsune.schedule.configs import config_from

    e = _entry_of(gpu, lambda g: key(problem, g), path)
    if e is None and hasattr(problem, "split_ok"):
        # the winner measured under the other split_ok, where it is valid here: a config measured where the
        # epilogue forbade a split is valid where it allows one (split_ok only widens the space; Llama's O
        # projection, whose task feeds the residual and the next norm: heuristic SPLIT=4 10.7 us, the tuned
        # SPLIT=1 8.4 us on H100), and an unsplit one the other way round (a contraction that takes a small one as
        # its operand's prologue: DLRM's bottom layers 0 and 1)
        flipped = replace(problem, split_ok=not problem.split_ok)
        e = _entry_of(gpu, lambda g: key(flipped, g), path)
        if e is not None and not problem.split_ok and int(e["config"].get("SPLIT", 1)) != 1:
            e = None
    if e is None and getattr(problem, "layout", 0):
        # a convolution over a channels-last input without an entry of its own: the entry keyed before keys
        # carried the input's layout (measured on whichever layout that shape had first)
        return lookup(replace(problem, layout=0), gpu, path)
    return None if e is None else config_from(problem.template, e["config"])


def _entry_of(gpu: GPU | str, key_of, first: Path | None = None) -> dict | None:
    """The entry ``key_of(gpu)`` (see ``_entry``), else the first of its twins' ``key_of(twin)``."""
    g = get_gpu(gpu)
    for one in (g, *g.tuning_twins):  # (the GPU itself, whose name may be no preset's: 'h100,sm_count=8')
        e = _entry(key_of(one), first)
        if e is not None:
            return e
    return None


def _entry(k: str, first: Path | None = None) -> dict | None:
    """Entry ``k`` of ``first`` (where given), else of the user's database, else of the packaged one (None: none
    has it, or tuning is off)."""
    if not enabled():
        return None
    for path in ((first, ) if first else ()) + (user_path(), PACKAGED):
        e = _read(path).get(k)
        if e:
            return e
    return None


def placement_key(graph_hash: str, gpu: GPU | str) -> str:
    """The entry of a program's tuned dataflow placement: the imported graph's text hash (shapes, dtypes, ops)."""
    return f"{get_gpu(gpu).name}|placement|{graph_hash}"


def lookup_placement(graph_hash: str, gpu: GPU | str) -> str | None:
    """The measured-fastest dataflow placement of a program (``kitsune-tune --placement``), or None."""
    e = _entry_of(gpu, lambda g: placement_key(graph_hash, g))
    return None if e is None else e["placement"]


def store_placement(graph_hash: str, gpu: GPU | str, placement: str, ms: dict, path: Path | None = None,
                    extra: dict | None = None) -> Path:
    """Record a program's fastest placement and every candidate's time (ms by placement)."""
    return _write(placement_key(graph_hash, gpu), dict(placement=placement, ms={k: round(v, 5) for k, v in ms.items()},
                                                        **(extra or {})), path)


def launch_key(graph_hash: str, mode: str, gpu: GPU | str) -> str:
    """The entry of a program's tuned kernel launch (``kitsune-tune --launch``), per mode."""
    return f"{get_gpu(gpu).name}|launch|{mode}|{graph_hash}"


def lookup_launch(graph_hash: str, mode: str, gpu: GPU | str) -> int | None:
    """The measured-fastest programmatic-dependent-launch setting of a program (0, 1 or 2), or None."""
    e = _entry_of(gpu, lambda g: launch_key(graph_hash, mode, g))
    return None if e is None else int(e["pdl"])


def store_launch(graph_hash: str, mode: str, gpu: GPU | str, pdl: int, us: dict, path: Path | None = None) -> Path:
    """Record a program's fastest launch setting and every candidate's time (us by setting)."""
    return _write(launch_key(graph_hash, mode, gpu), dict(pdl=int(pdl), us={str(k): round(v, 2) for k, v in us.items()}),
                  path)


def store(problem, gpu: GPU | str, config, ms: float, default_ms: float | None, path: Path | None = None,
          extra: dict | None = None) -> Path:
    """Record a winner (atomically: write a temporary file, then rename)."""
    return _write(key(problem, gpu), dict(config=config.as_dict(), ms=round(ms, 5),
                                          default_ms=None if default_ms is None else round(default_ms, 5),
                                          **(extra or {})), path)


def user_entry(k: str) -> dict | None:
    """Entry ``k`` of the user's database as stored (None: absent), whether or not tuning is on."""
    return _read(user_path()).get(k)


def put_user_entry(k: str, entry: dict | None) -> None:
    """Set entry ``k`` of the user's database to ``entry`` exactly (None: remove it), atomically: to put back what
    a measurement wrote there (``kitsune-tune --in-program``)."""
    path = user_path()
    with _lock:
        data = _fresh(path)
        if data.get(k) == entry:
            return
        if entry is None:
            data.pop(k, None)
        else:
            data[k] = entry
        _save(path, data)


def _write(k: str, entry: dict, path: Path | None) -> Path:
    import datetime

    path = path or user_path()
    with _lock:
        data = _fresh(path)
        data[k] = dict(entry, date=datetime.date.today().isoformat())
        _save(path, data)
    return path


def _fresh(path: Path) -> dict:
    """A database file's entries read now (not the lookups' cached copy): what a write starts from."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _save(path: Path, data: dict) -> None:
    """Write a database file atomically (a temporary file, then a rename); the caller holds ``_lock``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    _cache.pop(str(path), None)


__all__ = ["lookup", "store", "user_path", "user_entry", "put_user_entry", "enabled", "key", "PACKAGED", "placement_key", "lookup_placement",
           "store_placement", "launch_key", "lookup_launch", "store_launch"]
