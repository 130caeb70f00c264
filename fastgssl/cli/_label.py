"""The ``label`` job: a partly labeled file in, a label and a confidence for every row out.

``fastgssl label FILE -o OUT`` reads a file whose unlabeled rows are marked (``nan`` by
default; ``--unlabeled -1`` for files that mark them ``-1``), keeps every given label for
the fit, fits the learner the few-labels guide recommends for the label count (one place
makes it: :func:`_make_learner`), and writes OUT as CSV with the header
``label,confidence,given`` and one row per input row in input order: a row with a given
label keeps it (confidence 1, given 1), the others get the learner's label and confidence.

Every check that can refuse runs before any work (the output's folder, the file, its
labels), and OUT is written to a temporary file beside it and renamed, so a failed or
interrupted run never leaves half a file. No labels are hidden and no search is run: with
one label per class cross-validation cannot score a choice, and the summary says so.

The files read (the format read off the file, not its name):

- everything :func:`fastgssl.datasets.load_data_file` reads (LIBSVM, a table with one
  non-numeric column, the label; ARFF; the MNIST idx pair);
- a comma-separated table with a header row naming its label column ``label`` (or ``class``,
  ``target``, ``y``; a numeric label column with ``nan`` cells cannot be told apart
  otherwise);
- NumPy: ``.npz`` with arrays ``X`` and ``y``; ``.npy`` one 2-D array, column 0 the label.

Unlabeled markers: ``nan`` (in a text column also an empty cell, ``?`` or ``NA``); with
``--unlabeled -1`` the value ``-1`` instead, and a file holding both markers is refused
(``-1`` is a class of LIBSVM's two-class files, so it is never a marker by default).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fastgssl._jit import CompileClock
from fastgssl.cli._data import _plain, _scaling_choice
from fastgssl.cli._warnings import _MORE_LABELS, recorded, summarize

MARKERS = ("nan", "-1")
# the cells of a text label column read as the "nan" marker
_NAN_CELLS = {"", "nan", "?", "na", "n/a"}
_LABEL_HEADERS = ("label", "class", "target", "y")
# from this many points the guide builds the inverted-file graph (docs/guide/graphs.rst:
# "from about 2x10^5 dense points on, use 'ivf'")
_IVF_FROM = 200_000
_NPY = b"\x93NUMPY"
_ZIP = b"PK\x03\x04"
_GZIP = b"\x1f\x8b"
logger = logging.getLogger("fastgssl")


# -- the learner: the one place that chooses it ---------------------------------------------

def _make_learner(n_per_class, priors, n_samples, n_jobs, random_state):
    """``(estimator, confidence, why)``: the learner the few-labels guide recommends for
    ``n_per_class`` (the smallest and largest labeled count of a class), a function of the
    fitted estimator giving one confidence per training row (higher: more often right),
    and a dict saying what was chosen and why.

    :class:`fastgssl.models.LowLabelClassifier` at its defaults (PWLL with class mass
    normalization, rounded exactly to the class sizes from the labels' shares and refined
    by cut descent; ``chosen_`` says so), on the default kNN graph, or on the inverted-file
    graph from ``_IVF_FROM`` points. Its ``confidence_`` ranks the rows."""
    from fastgssl.models import LowLabelClassifier

    graph = "ivf" if n_samples >= _IVF_FROM else "knn"
    # class_priors=None: the labels' shares (``priors``), all the command can know
    del priors
    est = LowLabelClassifier(graph=graph, n_jobs=n_jobs, random_state=random_state)
    lo, hi = n_per_class
    why = {
        "learner": "LowLabelClassifier",
        "params": {"class_priors": "the labels' shares", "graph": graph,
                   "n_neighbors": est.n_neighbors},
        "reason": (f"the few-labels guide's recommendation for {lo}"
                   + (f"-{hi}" if hi != lo else "") + " labels per class "
                   "(docs/guide/low_labels.md)"),
        "graph_reason": (f"{n_samples:,} points >= {_IVF_FROM:,}: the inverted-file graph "
                         f"(docs/guide/graphs.rst)" if graph == "ivf" else
                         f"{n_samples:,} points < {_IVF_FROM:,}: the exact kNN graph"),
        "search": ("none: at one label per class no cross-validation can score a choice, so "
                   "the guide's recommendation runs as it is" if lo < 2 else
                   "none: the guide's recommendation runs as it is, every given label kept "
                   "for the fit"),
        "confidence": ("the learner's score margin at the row's label, scaled to [0, 1] over "
                       "the unlabeled rows (LowLabelClassifier.confidence_); 0 in a graph "
                       "component without a label"),
    }

    def confidence(fitted):
        return fitted.confidence_

    return est, confidence, why


# -- reading ----------------------------------------------------------------------------------

def _check_output(out, path):
    """Refuse an output that cannot be written, before any work."""
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"-o {out}: is a directory; give a file name, e.g. {out / 'labels.csv'}.")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"-o {out}: the folder {folder} does not exist.")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"-o {out}: the folder {folder} is not writable.")
    if out.exists() and not os.access(out, os.W_OK):
        raise ValueError(f"-o {out}: the file exists and is not writable.")
    if out.exists() and Path(path).exists() and out.resolve() == Path(path).resolve():
        raise ValueError(f"-o {out} is the input file; give another name.")
    return out


def _check_input(path):
    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"{path} is a directory, not a data file.")
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no such file.")
    if p.stat().st_size == 0:
        raise ValueError(f"{p.name} is empty (0 bytes).")
    with open(p, "rb") as fh:
        head = fh.read(1 << 12)
    if head[:2] == _GZIP:
        try:
            with gzip.open(p, "rb") as fh:
                head = fh.read(1 << 12)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{p.name}: a gzip file that does not decompress "
                             f"({exc}).") from None
        if not head:
            raise ValueError(f"{p.name} is empty (a gzip file of 0 bytes).")
    if not head.startswith((_NPY, _ZIP)) and not head.strip():
        raise ValueError(f"{p.name} is empty (only white space).")
    return p, head


def _open_text(path):
    with open(path, "rb") as fh:
        gz = fh.read(2) == _GZIP
    return (gzip.open(path, "rt", encoding="utf-8", errors="replace") if gz
            else open(path, encoding="utf-8", errors="replace"))


def _header_label_column(head):
    """The index of the header's label column of a comma-separated text, or None."""
    first = head.decode("utf-8", errors="replace").lstrip().split("\n", 1)[0]
    if "," not in first:
        return None
    names = [f.strip().strip('"').lower() for f in first.split(",")]
    for name in _LABEL_HEADERS:
        if name in names:
            return names.index(name)
    return None


def _read_header_table(path, j):
    """``(X, y cells as str)`` of a CSV whose header names the label column ``j``: two
    passes of numpy's compiled reader (features, then the label column as text)."""
    with _open_text(path) as fh:
        width = len(fh.readline().split(","))
    features = [c for c in range(width) if c != j]
    kw = dict(delimiter=",", skiprows=1, comments=None, quotechar='"')
    try:
        with _open_text(path) as fh:
            X = np.loadtxt(fh, usecols=features, dtype=np.float64, ndmin=2, **kw)
        with _open_text(path) as fh:
            y = np.loadtxt(fh, usecols=[j], dtype=str, ndmin=1, **kw)
    except ValueError as exc:  # a cell that is not a number, a row of another width
        raise ValueError(f"{path.name}: {exc} Only the label column may hold text; a "
                         f"truncated or damaged file?") from None
    if X.shape[0] == 0:
        raise ValueError(f"{path.name} holds a header and no data rows.")
    return X, np.char.strip(y)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_numpy(path, head):
    try:
        if head.startswith(_ZIP):
            with np.load(path, allow_pickle=False) as data:
                missing = [k for k in ("X", "y") if k not in data.files]
                if missing:
                    raise ValueError(f"{path.name}: an .npz file needs arrays 'X' and 'y'; "
                                     f"it holds {sorted(data.files)}.")
                X, y = np.asarray(data["X"]), np.asarray(data["y"])
            what = "NumPy .npz, arrays X and y"
        else:
            A = np.load(path, allow_pickle=False)
            if A.ndim != 2 or A.shape[1] < 2:
                raise ValueError(f"{path.name}: an .npy file must hold one 2-D array with "
                                 f"the label in column 0 and features after it; it holds "
                                 f"shape {A.shape}.")
            X, y = A[:, 1:], A[:, 0]
            what = "NumPy .npy, label: column 0"
    except (OSError, EOFError) as exc:  # truncated, or not what its magic says
        raise ValueError(f"{path.name}: a NumPy file that does not read ({exc}); a "
                         f"truncated or damaged file?") from None
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"{path.name}: X must be 2-D and y 1-D with one entry per row of X; "
                         f"got X {X.shape}, y {y.shape}.")
    try:
        X = X.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{path.name}: the features X are not numbers ({X.dtype}).") from None
    return X, y, what


def _read(path):
    """``(X, y, path, what)`` of the file at ``path`` (checked for emptiness first)."""
    from fastgssl import datasets

    p, head = _check_input(path)
    if head.startswith((_NPY, _ZIP)) and not Path(p).name.endswith(".gz"):
        X, y, what = _read_numpy(p, head)
        return X, y, p, what
    _check_memory(p, head)
    j = _header_label_column(head)
    if j is not None:
        X, y = _read_header_table(p, j)
        return X, y, p, f"CSV, label: header column {j + 1}"
    try:
        X, y, what = datasets.load_data_file(p)
    except ValueError as exc:
        raise ValueError(f"{exc} A CSV for fastgssl label may also name its label column "
                         f"'label' in a header row; NumPy files: .npz with X and y, .npy "
                         f"with the label in column 0.") from None
    except (OSError, EOFError) as exc:  # a gzip or idx file cut short
        raise ValueError(f"{p.name}: the file does not read to its end ({exc}); a "
                         f"truncated or damaged file?") from None
    name = p.name.removesuffix(".gz")
    return X, y, p, what.removeprefix(f"{name} (").removesuffix(")")


def _check_memory(path, head):
    """Refuse, before reading, a text file whose dense features would not fit: rows
    estimated from the file's size and its first lines, columns from the widest of them
    (a gzip file by the size its trailer records). Reading holds the parsed rows
    and the array, and the fit a standardized copy and the graph: about 4 arrays."""
    from fastgssl._memory import check_dense_memory

    lines = [ln for ln in head.decode("utf-8", errors="replace").splitlines() if ln.strip()]
    if len(lines) < 2:
        return
    size = path.stat().st_size
    with open(path, "rb") as fh:
        if fh.read(2) == _GZIP and size >= 18:  # gzip's trailer: the size mod 2^32
            fh.seek(-4, 2)
            size = max(size, int.from_bytes(fh.read(4), "little"))
    per_line = max(1.0, sum(len(ln) + 1 for ln in lines[:-1]) / (len(lines) - 1))
    n_cols = max(_width(ln) for ln in lines[:-1])
    check_dense_memory(size / per_line, n_cols, 4, what=f"the features of {path.name}",
                       remedy="use a machine with more memory or a sample of the rows")


def _width(line):
    """Columns of a text line: its fields, or for LIBSVM ``label index:value ...`` the
    largest index (the features are read dense)."""
    fields = line.replace(",", " ").split()
    indices = [f.split(":", 1)[0] for f in fields[1:] if ":" in f]
    if indices and all(i.isdigit() for i in indices):
        return max(int(i) for i in indices)
    return len(fields)


def _markers(y, unlabeled):
    """``(labels as float or str, unlabeled mask)`` under the marker ``unlabeled``
    (``"nan"`` or ``"-1"``); a file holding both markers is refused with ``-1``."""
    y = np.asarray(y)
    if y.dtype.kind in "OUS":
        cells = np.char.strip(y.astype(str))
        nan = np.isin(np.char.lower(cells), list(_NAN_CELLS))
        rest = cells[~nan]
        numeric = all(_is_number(v) for v in rest[:1000]) and all(_is_number(v) for v in rest)
        if numeric:
            values = np.full(len(y), np.nan)
            values[~nan] = rest.astype(np.float64)
            y = values
        else:
            y = cells
            minus = cells == "-1"
            if unlabeled == "-1":
                if nan.any():
                    _mixed(int(nan.sum()), int(minus.sum()))
                return y, minus
            return y, nan
    y = y.astype(np.float64)
    nan = np.isnan(y)
    if unlabeled == "-1":
        minus = y == -1
        if nan.any():
            _mixed(int(nan.sum()), int(minus.sum()))
        return y, minus
    return y, nan


def _mixed(n_nan, n_minus):
    raise ValueError(
        f"mixed unlabeled markers: {n_nan:,} rows are labeled nan and {n_minus:,} are -1, and "
        f"--unlabeled -1 makes -1 the marker. Mark every unlabeled row one way (the default, "
        f"--unlabeled nan, reads -1 as a class, as LIBSVM's two-class files use it).")


def _check_labels(y, unlabeled_mask, marker, n_rows, name):
    """Refuse, before any work, labels that leave nothing to fit or nothing to label."""
    n_lab = int(n_rows - unlabeled_mask.sum())
    if n_lab == 0:
        raise ValueError(f"{name}: every one of its {n_rows:,} rows is unlabeled "
                         f"({marker}): give at least one label per class.")
    if n_lab == n_rows:
        hint = ""
        if marker == "nan" and y.dtype.kind == "f" and np.any(y == -1):
            hint = (f"; if -1 marks the unlabeled rows here ({int(np.sum(y == -1)):,} of "
                    f"them), pass --unlabeled -1")
        elif marker == "nan" and y.dtype.kind != "f" and np.any(y == "-1"):
            hint = "; if -1 marks the unlabeled rows here, pass --unlabeled -1"
        raise ValueError(f"{name}: every one of its {n_rows:,} rows has a label, so there is "
                         f"nothing to label (unlabeled rows are marked {marker}{hint}). To "
                         f"measure a model on a fully labeled file use fastgssl select.")
    present = y[~unlabeled_mask]
    if present.dtype.kind == "f" and not np.all(np.isfinite(present)):
        raise ValueError(f"{name}: a label is infinite; labels must be finite (nan marks an "
                         f"unlabeled row).")
    classes, counts = np.unique(present, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"{name}: every one of its {n_lab:,} labeled rows is of one class "
                         f"({_plain(classes[0])!r}): label at least one row of each other "
                         f"class.")
    if present.dtype.kind == "f" and not np.all(classes == np.round(classes)):
        raise ValueError(f"{name}: the labels are not whole numbers or names (e.g. "
                         f"{_plain(classes[classes != np.round(classes)][0])!r}): fastgssl "
                         f"label assigns classes, not a numeric target.")
    return classes, counts


def _check_features(X, name):
    if X.shape[0] < 3:
        raise ValueError(f"{name}: {X.shape[0]} row(s); graph propagation needs a few.")
    if not np.all(np.isfinite(X)):
        row = int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0])
        raise ValueError(f"{name}: row {row + 1} holds a non-finite feature (nan or inf); "
                         f"only the label may be missing.")


def _duplicate_rows(X):
    """How many rows repeat an earlier row exactly (they work: a note, not a refusal),
    counted by a hash of each row's bytes (no sort of the rows, no copy of ``X``)."""
    X = np.ascontiguousarray(X)
    return int(X.shape[0] - len({hash(row.tobytes()) for row in X}))


# -- the job ------------------------------------------------------------------------------------

def label(path, out, *, unlabeled="nan", standardize=None, n_jobs=None, random_state=0,
          verbose=0):
    """Run the ``label`` job: read ``path``, fit, write ``out``; return the summary.

    Parameters
    ----------
    path : str or Path
        The partly labeled file (formats and markers: this module's docstring).
    out : str or Path
        The CSV to write: header ``label,confidence,given``, one row per input row in input
        order; written to a temporary file beside it and renamed at the end.
    unlabeled : {"nan", "-1"}, default="nan"
        The marker of unlabeled rows; with ``"-1"`` a file that also holds ``nan`` is
        refused.
    standardize : bool or None, default=None
        Center and scale the features; None reads it off the features (as ``select``).
    n_jobs : int or None, default=None
        Numba threads of the fit (None: the cores other jobs leave free).
    random_state : int, default=0
        Seed of any random draw of the learner.
    verbose : int, default=0
        1: stage lines and the library's progress (logger ``"fastgssl"``) on stderr.

    Returns
    -------
    summary : dict
        What ``--json`` prints: the file and its label counts, the learner chosen and why
        (``chosen``: learner, parameters, reason, search, confidence, threads, the graph's
        recall when approximate), the times of each stage and the warnings raised.

    Raises
    ------
    ValueError, OSError, MemoryError
        Before any work, for what it refuses (the message names the cause and the fix).
    """
    if unlabeled not in MARKERS:
        raise ValueError(f"--unlabeled must be one of {', '.join(MARKERS)}, got "
                         f"{unlabeled!r}.")
    t0 = time.perf_counter()
    out = _check_output(out, path)
    say = _Say(verbose)
    with CompileClock() as clock, recorded() as caught:
        summary = _label(path, out, unlabeled, standardize, n_jobs, random_state, say, clock)
        summary["compile_seconds"] = clock.seconds
    lines, summary["warnings_raised"] = summarize(caught)
    summary["warnings"] = [m.replace(_MORE_LABELS, "a label in each of them reaches them")
                           for m in lines]
    summary["seconds"]["total"] = time.perf_counter() - t0
    return summary


class _Say:
    """Stage lines on stderr (level >= 1), each with its elapsed time."""

    def __init__(self, level):
        self.level = int(level)
        self.t0 = time.perf_counter()

    def __call__(self, text):
        if self.level >= 1:
            print(f"fastgssl label: [{time.perf_counter() - self.t0:6.1f} s] {text}",
                  file=sys.stderr, flush=True)


def _label(path, out, unlabeled, standardize, n_jobs, random_state, say, clock):
    seconds = {}
    t = time.perf_counter()
    say(f"reading {path}")
    X, y_raw, p, what = _read(path)
    name = p.name
    y, missing = _markers(y_raw, unlabeled)
    if len(y) != X.shape[0]:
        raise ValueError(f"{name}: {X.shape[0]} feature rows but {len(y)} labels.")
    classes, counts = _check_labels(y, missing, unlabeled, X.shape[0], name)
    _check_features(X, name)
    n_dup = _duplicate_rows(X)
    seconds["read"] = time.perf_counter() - t
    say(f"read {X.shape[0]:,} rows x {X.shape[1]:,} features: {int((~missing).sum()):,} "
        f"labeled in {classes.size} classes, {int(missing.sum()):,} to label")

    if standardize is None:
        standardize, features = _scaling_choice(X)
    else:
        features = ("standardized (--standardize)" if standardize
                    else "as loaded (--no-standardize)")
    if standardize:
        std = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)
    ids = np.full(X.shape[0], -1, dtype=np.int64)
    ids[~missing] = np.searchsorted(classes, y[~missing])
    priors = counts / counts.sum()
    est, confidence, why = _make_learner((int(counts.min()), int(counts.max())), priors,
                                         X.shape[0], n_jobs, random_state)
    say(f"fitting {why['learner']} on a {why['params']['graph']} graph ({why['search']})")
    with clock.split() as spent, _library_progress(say.level):
        est.fit(X, ids)
    seconds["fit"] = spent["run"]
    seconds["fit_compile"] = spent["compile"]
    pred = np.asarray(est.transduction_)
    conf = np.asarray(confidence(est), dtype=np.float64)
    decided = pred != -1
    label_ids = np.where(missing, pred, ids)
    conf = np.where(missing, conf, 1.0)
    conf[missing & ~decided] = 0.0
    say("fitted; writing " + str(out))
    t = time.perf_counter()
    _write(out, classes, label_ids, conf, ~missing)
    seconds["write"] = time.perf_counter() - t
    say(f"wrote {X.shape[0]:,} rows to {out}")

    per_class = {str(_plain(c)): int(n) for c, n in zip(classes, counts)}
    predicted = np.bincount(label_ids[missing & decided], minlength=classes.size)
    return {
        "file": str(p),
        "format": what,
        "output": str(out),
        "columns": ["label", "confidence", "given"],
        "n_rows": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "n_duplicate_rows": n_dup,
        "n_labeled": int((~missing).sum()),
        "n_unlabeled": int(missing.sum()),
        "unlabeled_marker": unlabeled,
        "n_classes": int(classes.size),
        "labels_per_class": per_class,
        "labels_per_class_range": [int(counts.min()), int(counts.max())],
        "predicted_per_class": {str(_plain(c)): int(n) for c, n in zip(classes, predicted)},
        "n_undecided": int((missing & ~decided).sum()),
        "features": features,
        "chosen": {**why, **_fitted_facts(est)},
        "seconds": seconds,
        "random_state": random_state,
    }


def _fitted_facts(est):
    """What the fitted learner reports: its own account of what it chose and why
    (``chosen_``, a dict, when it keeps one: under ``learner_chosen``), its threads and its
    graph's recall."""
    facts = {}
    chosen = getattr(est, "chosen_", None)
    if chosen:
        facts["learner_chosen"] = dict(chosen)
    facts["n_threads"] = getattr(est, "n_threads_", None)
    recall = getattr(est, "graph_recall_", None)
    if recall is not None:
        facts["graph_recall"] = float(recall)
    info = getattr(est, "solver_info_", None)
    if hasattr(info, "iterations") and hasattr(info, "relative_residuals"):
        facts["solver"] = {  # fastgssl.solvers.SolveInfo of the propagation's sparse solve
            "method": str(getattr(info, "solver", "")),
            "iterations": int(np.max(info.iterations)) if np.size(info.iterations) else 0,
            "relative_residual": float(np.max(info.relative_residuals))
            if np.size(info.relative_residuals) else 0.0,
            "converged": not bool(info)}
    return facts


@contextlib.contextmanager
def _library_progress(level):
    """At level >= 1, the library's progress lines (logger ``fastgssl``, INFO) on stderr;
    the logger's handlers and level are restored afterwards."""
    if level < 1:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("fastgssl label:            %(message)s"))
    before = logger.level
    logger.addHandler(handler)
    if before == logging.NOTSET or before > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)


def _write(out, classes, label_ids, conf, given):
    """OUT as CSV, written to a temporary file beside it and renamed (never half a file)."""
    names = np.array([str(_plain(c)) for c in classes] + [""], dtype=object)
    text = names[label_ids]  # -1 (undecided): the empty last name
    if any("," in s or '"' in s or "\n" in s for s in names):
        text = np.array(['"' + s.replace('"', '""') + '"' for s in text], dtype=object)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("label,confidence,given\n")
            for i in range(0, len(text), 65536):
                block = slice(i, i + 65536)
                fh.writelines(f"{a},{c:.6g},{int(g)}\n" for a, c, g in
                              zip(text[block], conf[block], given[block]))
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def print_summary(s, stream):
    """The text summary of a ``label`` run (``--json`` prints the dict)."""
    p = lambda *a: print(*a, file=stream)  # noqa: E731
    c = s["chosen"]
    lo, hi = s["labels_per_class_range"]
    p(f"file         {s['file']} ({s['format']}): {s['n_rows']:,} rows x {s['n_features']:,} "
      f"features" + (f", {s['n_duplicate_rows']:,} of them repeating an earlier row (kept: "
                     f"the copies sit at distance 0 in the graph)"
                     if s["n_duplicate_rows"] else ""))
    p(f"labels       {s['n_labeled']:,} given in {s['n_classes']} classes ({lo}"
      + (f"-{hi}" if hi != lo else "") + f" per class), {s['n_unlabeled']:,} to label "
      f"(marker {s['unlabeled_marker']})")
    p(f"features     {s['features']}")
    params = ", ".join(f"{k}={v}" for k, v in c["params"].items())
    p(f"learner      {c['learner']}({params}): {c['reason']}")
    inner = c.get("learner_chosen")
    if inner:
        p(f"chose        {inner.get('reason') or inner.get('estimator', inner.get('learner'))}"
          + (f" ({inner['n_moved']:,} points moved by the cut descent)"
             if "n_moved" in inner else ""))
    p(f"graph        {c['graph_reason']}"
      + (f"; recall {c['graph_recall']:.3f}" if "graph_recall" in c else ""))
    p(f"search       {c['search']}")
    p(f"confidence   {c['confidence']}")
    sec = s["seconds"]
    p(f"time         {sec['total']:.1f} s (fit {sec['fit']:.1f} s on {c['n_threads']} Numba "
      f"thread(s), read {sec['read']:.1f} s, write {sec['write']:.1f} s; Numba compiling "
      f"{s['compile_seconds']:.1f} s)")
    p(f"wrote        {s['output']}: columns {','.join(s['columns'])}, one row per input row")
    if s["n_undecided"]:
        p(f"undecided    {s['n_undecided']:,} rows (empty label, confidence 0): no label "
          f"in their graph component")
    for message in s["warnings"]:
        p(f"warning      {message}")


def dumps(summary):
    """The summary as JSON (values a learner's ``chosen_`` holds that JSON has no type
    for are written as their text)."""
    return json.dumps(summary, indent=2, default=str)
