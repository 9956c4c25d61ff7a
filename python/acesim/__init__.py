"""acesim from Python: the simulator's commands as functions (docs/python.md).

Every function runs in-process what the command line would run, with the
same option names, checks and messages, and returns what ``--json`` prints,
as plain dicts and lists::

    import acesim
    r = acesim.collective(platform="hgx-h100", bytes="64MiB")
    r["results"][0]["busbw_GBps"]

Options are keyword arguments named like the command line's long options
(``min_bytes`` for ``--min-bytes``). A value is a number or a string as it
would be typed; ``True``/``False`` for a flag; a list for an option taking
several values (``compare=["sm", "ace"]``) or a repeatable one
(``straggler=["3=2.0", "5=1.5"]``); ``None`` leaves the option out. The
platform is a file path, a preset name or a dict (the platform YAML as a
dict), and a platform YAML key is set with its dotted path:
``acesim.collective(**{"npu.hbm_GBps": 4000})``.

Bad input and simulations that cannot finish raise ``ValueError`` with the
message the command line prints after ``acesim: error: ``; a file that
cannot be written (``trace=``, ``csv=``, ``chakra_out=``, a sweep's
``out``) raises ``OSError``; internal errors raise ``RuntimeError``. Each
has a ``status`` attribute, the command line's exit status (2: bad input
or an unusable path, 3: stuck, 1: a failed write or internal).
Simulations run with the GIL released, so threads calling acesim run in
parallel.
"""

import json
import math
import os
import re
import reprlib

from . import _acesim

__version__ = _acesim.__version__

__all__ = ["collective", "run", "characterize", "cluster", "sweep", "rows", "flatten_metrics", "__version__"]


_SCALARS = (type(None), bool, int, float, str)
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 100


def _short(name):
    """A name (a dict key) as messages give it: at most 80 characters of it
    and "..." (the native half's kMaxQuoted): a key may be megabytes."""
    return name if len(name) <= 80 else name[:80] + "..."


def _a(value):
    """``value`` and its type for messages, shortened: "an int (5)", "None"."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name} ({_REPR.repr(value)})"


def _plain(value, path, parents=()):
    """``value`` as JSON writes it -- a path as its text, numpy values as
    numbers and lists, a tuple as a list, a set as a sorted list -- checked
    on the way: keys are strings, numbers finite, text valid Unicode, no list
    or dict holds itself and none nests deeper than ``_acesim.MAX_DEPTH``
    levels. ``path`` names the value in messages (``acesim.run: options``);
    a wrong type raises TypeError, a bad value ValueError, naming the key
    path down to the culprit. Never recurses more than MAX_DEPTH deep."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    elif hasattr(value, "tolist") and not isinstance(value, (dict, list, tuple)):  # numpy arrays and scalars
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{path}: {value} is not a finite number")
    if isinstance(value, str):
        if "\0" in value:
            raise ValueError(f"{path}: text holding a NUL character, which no command line can carry")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as e:
                raise ValueError(f"{path}: not valid Unicode text ({e.reason} at index {e.start})") from None
    if isinstance(value, _SCALARS):
        return value
    if not isinstance(value, (dict, list, tuple, set, frozenset)):
        raise TypeError(f"{path}: cannot pass {_a(value)}; give a number, string, bool, list or dict")
    if any(value is p for p in parents):
        raise ValueError(f"{path}: holds itself (a list or dict inside itself)")
    if len(parents) >= _acesim.MAX_DEPTH:
        raise ValueError(f"{path}: nested more than {_acesim.MAX_DEPTH} levels of lists and maps deep")
    parents += (value,)
    if isinstance(value, dict):
        plain = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{path}: a key must be a string, not {_a(key)}")
            plain[key] = _plain(item, f"{path}.{_short(key)}", parents)
        return plain
    items = [_plain(item, f"{path}.{i}", parents) for i, item in enumerate(value)]
    return sorted(items) if isinstance(value, (set, frozenset)) else items


def _dumps(value, path):
    return json.dumps(_plain(value, path), allow_nan=False)


def _run(command, options):
    where = f"acesim.{command}: options"
    options = _plain(options, where)
    # What no option takes: a platform other than a path, preset or dict;
    # a dict or a list inside a list for any other option (a dotted
    # platform key takes any value).
    for name, value in options.items():
        if name == "platform":
            if not isinstance(value, (type(None), str, dict)):
                raise TypeError(f"{where}.platform: a platform file, a preset's name or a dict (the platform YAML), "
                                f"not {_a(value)}")
        elif "." not in name:
            if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, (list, dict)) for v in value)):
                raise TypeError(f"{where}.{_short(name)}: a number, string or bool, or a list of them, not "
                                f"{'a dict' if isinstance(value, dict) else 'a list holding a list or dict'}")
    return json.loads(_acesim.run_once(command, json.dumps(options, allow_nan=False), "acesim." + command))


def collective(**options):
    """Times collectives, as ``acesim collective --json``.

    Keyword arguments are the command's options (``op``, ``bytes``,
    ``min_bytes``, ``max_bytes``, ``step_factor``, ``dims``, ``root``,
    ``library``, ``algo``, ``proto``, ``channels``, ``straggler``) and the
    platform options (``platform``, ``network``, ``system``, ``backend``,
    ``granularity``, ``executor``, ``chunks``, ``nodes``, ``full``,
    ``check``); a dotted name sets a platform YAML key. Returns the
    ``--json`` report as a dict: one entry of ``results`` per size::

        r = acesim.collective(platform="hgx-h100", op="all-reduce", bytes="64MiB")
        r["results"][0]["time_ns"]  # 280289.522 (one node of 8 H100s)
    """
    return _run("collective", options)


def run(**options):
    """Runs a training workload, as ``acesim run --json``.

    Keyword arguments are the command's options (``model``, ``workload``,
    ``chakra``, ``batch``, ``iterations``, ``compare``, ``tp``, ``pp``,
    ``dp``, ..., see ``acesim run --help``) and the platform options, as for
    :func:`collective`. ``compare`` takes a list (``["sm", "ace",
    "ideal"]``). Returns the ``--json`` report as a dict (one entry of
    ``runs`` per executor compared)::

        acesim.run(model="resnet50", compare=["sm", "ace"])["runs"]
    """
    return _run("run", options)


def characterize(study, **options):
    """Runs an endpoint study, as ``acesim characterize STUDY --json``.

    ``study`` is the study's name (``acesim characterize --help`` lists
    them); keyword arguments are its options (``op``, ``bytes``, ``gemm``)
    and the platform options, as for :func:`collective`. Returns the
    ``--json`` report as a dict (its ``rows``)::

        acesim.characterize("overlap", bytes="64MiB")["rows"]
    """
    if not isinstance(study, str):
        raise TypeError(f"acesim.characterize: study: a study's name (a string), not {_a(study)}")
    options = dict(options)
    options["study"] = study
    return _run("characterize", options)


def cluster(file, **options):
    """Runs several jobs on one cluster, as ``acesim cluster FILE --json``.

    ``file`` is the cluster file (docs/cluster.md); keyword arguments are
    the command's options (``no_alone``). Returns the ``--json`` report as a
    dict: each job's iteration times and slowdown in ``jobs``, the busiest
    links in ``busiest_links``::

        acesim.cluster("examples/clusters/two-jobs-fat-tree.yaml")["jobs"][0]["slowdown"]
    """
    if not isinstance(file, (str, os.PathLike)):
        raise TypeError(f"acesim.cluster: file: a cluster file's path, not {_a(file)}")
    options = dict(options)
    options["file"] = os.fspath(file)
    return _run("cluster", options)


def sweep(grid, out=None, jobs=None, shard=None):
    """Runs a grid of points, as ``acesim sweep GRID --out DIR``.

    ``grid`` is a grid file's path (YAML) or a dict with the same keys:
    ``command`` (``collective``, ``run`` or ``characterize``), ``options``
    (the base options, named as for :func:`collective`), ``grid`` (a list of
    values per option or dotted platform key: every combination) and
    ``zip`` (lists of one length, advanced together)::

        acesim.sweep({"command": "collective",
                      "options": {"platform": "hgx-h100"},
                      "grid": {"executor": ["sm", "ace"], "bytes": ["1MiB", "64MiB"]}})

    ``out`` is a directory to write as the command line does
    (``sweep.json``, ``results.jsonl``, ``results.csv``; a directory of the
    same grid resumes: its points are not run again); ``None`` writes
    nothing. ``jobs`` is the number of points run at once (``None``: every
    core); ``shard`` is ``"I/N"``: every N-th point from point I.

    Returns the records sorted by point, as in ``results.jsonl``:
    ``{"point", "params", "result"}`` (``result`` is the point's ``--json``
    report) or, for a point that failed, ``{"point", "params", "error",
    "status"}``. A malformed grid raises ``ValueError`` before any point
    runs; a point's own failure is an error record, not an exception.
    """
    if jobs is None:
        jobs = 0
    elif isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f"acesim.sweep: jobs: an integer in 1..1024, not {_a(jobs)}")
    elif not 1 <= jobs <= 1024:
        raise ValueError(f"acesim.sweep: jobs: must be an integer in 1..1024, got {jobs!r}")
    if shard is not None and not isinstance(shard, str):
        raise TypeError(f"acesim.sweep: shard: a string I/N (e.g. '0/4'), not {_a(shard)}")
    out = "" if out is None else _path(out, "out")
    if isinstance(grid, dict):
        text, name = _dumps(grid, "acesim.sweep: grid"), "grid"
    elif isinstance(grid, (str, os.PathLike)):
        text, name = "", _path(grid, "grid")
    else:
        raise TypeError(f"acesim.sweep: grid: a grid file's path or a dict, not {_a(grid)}")
    done = json.loads(_acesim.sweep(text, name, out, jobs, shard or ""))
    axes = done["axes"]
    records = []
    for record in done["records"]:
        # The record's keys and its parameters in the grid's order.
        params = record.get("params", {})
        ordered = {"point": record["point"], "params": {a: params[a] for a in axes if a in params}}
        ordered.update((k, v) for k, v in record.items() if k not in ordered)
        records.append(ordered)
    return records


def _path(value, what):
    """A path argument as text (a str or os.PathLike naming text)."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str):
        raise TypeError(f"acesim.sweep: {what}: a path (str or os.PathLike), not {_a(value)}")
    return text


def flatten_metrics(report, axes=()):
    """A ``--json`` report's metrics as ``results.csv`` names them: a dict of
    dotted names (``busbw_GBps``, ``link_bytes_per_dim.0``, ``results.1.time_ns``
    when a report holds several rows) to numbers or strings, in the report's
    order. A metric named like one of ``axes`` is ``result.NAME``.
    """
    if not isinstance(report, dict):
        raise TypeError(f"acesim.flatten_metrics: report: a --json report (a dict), not {_a(report)}")
    names = _iterable(axes, "acesim.flatten_metrics: axes")
    if not all(isinstance(a, str) for a in names):
        raise TypeError(f"acesim.flatten_metrics: axes: a list of names (strings), not {_REPR.repr(axes)}")
    report_json = _dumps(report, "acesim.flatten_metrics: report")
    return dict(json.loads(_acesim.flatten_metrics(report_json, json.dumps(names))))


def _iterable(value, what):
    """A list argument's items (any iterable but text and dicts)."""
    if not isinstance(value, (str, bytes, dict)):
        try:
            return list(value)
        except TypeError:
            pass
    raise TypeError(f"{what}: a list, not {_a(value)}")


_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _number(text):
    """A parameter's text as the number it spells ("4000" -> 4000, "2.5" -> 2.5), else as it is."""
    if isinstance(text, str):
        if _INT.fullmatch(text):
            return int(text)
        if _FLOAT.fullmatch(text):
            return float(text)
    return text


def rows(records):
    """The records of :func:`sweep` as ``results.csv``'s rows: one flat dict
    per record with ``point``, the point's parameters, its metrics
    (:func:`flatten_metrics`) and ``error`` (``None`` for a point that ran).
    A parameter is kept as the grid's text (``"64MiB"``, ``"sm"``) unless it
    spells a number, which becomes one (``"4000"`` -> ``4000``), as
    ``pandas.read_csv`` would read the column. Ready for
    ``pandas.DataFrame(acesim.rows(records))``.
    """
    records = _iterable(records, "acesim.rows: records")
    for i, record in enumerate(records):
        if not isinstance(record, dict) or not isinstance(record.get("params", {}), dict):
            raise TypeError(f"acesim.rows: records.{i}: a record of acesim.sweep (a dict, its params a dict), not "
                            f"{_a(record)}")
    axes = []
    for record in records:
        for name in record.get("params", {}):
            if name not in axes:
                axes.append(name)
    table = []
    for record in records:
        row = {"point": record.get("point")}
        row.update((name, _number(value)) for name, value in record.get("params", {}).items())
        if "result" in record:
            row.update(flatten_metrics(record["result"], axes))
        row["error"] = record.get("error")
        table.append(row)
    return table
