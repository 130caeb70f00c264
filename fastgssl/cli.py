"""The ``fastgssl`` command.

``fastgssl select`` runs model selection by t-fold cross-validation (exact where it costs
about one fit, else t-FBIF / t-BIF of Liu et al. (2018, 2019) with the winner verified), on
scikit-learn's digits (the default), its breast cancer data or a LIBSVM file (path or
shared-dataset name), and prints the chosen hyper-parameters, the CV criterion, the test
error of the selected model on a held-out 30 % split, the time of the approximate CV against
exact t-fold CV, and the time Numba spent compiling (apart from the rest)::

    fastgssl select                                  # LapSVM on digits, exact 10-fold CV
    fastgssl select --dataset housing_scale          # LapRLS, a regression set
    fastgssl select --dataset letter.scale --task classification
    fastgssl select --model lapsvm --labeled-fraction 0.1 --folds 5 --json
    fastgssl select --quick --compare-exact          # also run the exact grid search

Features are standardized with the training split's mean and standard deviation for every
data source (``--no-standardize`` keeps them as loaded); regression targets likewise
(``--no-standardize-target``), and the report states both and the units of its errors.
Progress (tqdm, with an ETA) goes to stderr: on by default at a terminal, ``-v`` forces it,
``-vv`` adds the search's own lines, ``-q`` silences it; stdout holds only the report (with
``--json``: only the JSON object).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

__all__ = ["main", "build_parser", "select"]

_REGRESSION_SETS = {"abalone", "housing_scale", "mpg", "space_ga", "eunite2001", "bodyfat",
                    "cpusmall", "triazines", "pyrim", "mg"}
_TASKS = ("classification", "regression")
_DEFAULT_FOLDS = 10


class _Model(NamedTuple):
    """A ``--model`` choice: the tasks it takes, whether it learns from unlabeled points
    (the job then hides labels and adds the baselines), whether its loss is the square
    loss (``--method exact-quadratic``), its grid and its estimator."""

    tasks: tuple
    semi_supervised: bool
    square_loss: bool
    grid: str
    build: Callable


def _kernel_machines():
    from fastgssl import models

    return models


_MODELS = {
    "krr": _Model(_TASKS, False, True, "kernel_machine",
                  lambda task, seed: _kernel_machines().KRR(task=task, random_state=seed)),
    "svm": _Model(("classification",), False, False, "kernel_machine",
                  lambda task, seed: _kernel_machines().SVM(random_state=seed)),
    "laprls": _Model(_TASKS, True, True, "manifold",
                     lambda task, seed: _kernel_machines().LapRLS(task=task,
                                                                  random_state=seed)),
    "lapsvm": _Model(("classification",), True, False, "manifold",
                     lambda task, seed: _kernel_machines().LapSVM(random_state=seed)),
    # graph propagation (exact CV from one block solve; PoissonMBO refitted per fold)
    "poisson": _Model(("classification",), True, False, "propagation",
                      lambda task, seed: _kernel_machines().PoissonLearning()),
    "poissonmbo": _Model(("classification",), True, False, "propagation",
                         lambda task, seed: _kernel_machines().PoissonMBO()),
    "labelprop": _Model(("classification",), True, False, "propagation",
                        lambda task, seed: _kernel_machines().LabelPropagation()),
    "lgc": _Model(("classification",), True, False, "propagation",
                  lambda task, seed: _kernel_machines().LocalGlobalConsistency()),
}
_DEFAULT_MODEL = {"classification": "lapsvm", "regression": "laprls"}
_METHODS = ("auto", "fbif", "fbif-margin", "bif", "exact", "exact-quadratic", "newton")
_BACKENDS = ("auto", "dense", "nystrom")

# The dense route of a kernel model (an n x n kernel matrix and, for laprls / lapsvm, the
# n x n system of the deformed kernel per ratio gamma_i / (n^2 gamma_a)) is estimated before
# the search starts (_dense_plan): its memory, and a lower bound of its factorization work
# at _DENSE_FLOPS_PER_SECOND (one BLAS thread of the 2-core project machine, at load 4, ran
# a 21,669 x 21,669 LU in 246 s, 28 GFlop/s: bench/repro_openblas_getrf.py; the constant
# leaves room for a busier machine). --backend auto takes the
# Nystrom backend when the dense route would not fit or would take longer than
# _DENSE_AUTO_SECONDS; --backend dense is refused when it would not fit or would take longer
# than _DENSE_MAX_SECONDS.
_DENSE_FLOPS_PER_SECOND = 2e10
_DENSE_AUTO_SECONDS = 120.0
_DENSE_MAX_SECONDS = 1800.0


def build_parser():
    """The argument parser of the ``fastgssl`` command."""
    from fastgssl import __version__

    parser = argparse.ArgumentParser(
        prog="fastgssl",
        description="Fast graph-based semi-supervised learning: model selection by "
                    "cross-validation from one fit.",
    )
    parser.add_argument("--version", action="version", version=f"fastgssl {__version__}")
    sub = parser.add_subparsers(dest="command")
    sel = sub.add_parser(
        "select",
        help="select hyper-parameters by t-FBIF / t-BIF / exact CV and report test error",
        description="Grid search by approximate (or exact) t-fold CV on a held-out split.",
    )
    sel.add_argument("--dataset", default="digits",
                     help="digits (default, bundled with scikit-learn), breast_cancer, "
                          "mnist (the shared MNIST test images), a LIBSVM file path or a "
                          "shared dataset name such as a1a or housing_scale")
    sel.add_argument("--model", choices=_MODELS, default=None,
                     help="default: lapsvm for classification, laprls for regression (semi-"
                          "supervised: --labeled-fraction of the training labels are kept; the "
                          "report compares an SVM on the labeled points alone and scikit-"
                          "learn's LabelSpreading); krr / svm are supervised; graph "
                          "propagation: poisson (Poisson learning, for few labels), "
                          "poissonmbo, labelprop (harmonic), lgc (local and global "
                          "consistency), their n_neighbors (and class mass normalization) "
                          "selected by exact CV from one block solve")
    sel.add_argument("--method", choices=_METHODS, default=None,
                     help="CV criterion of the search (default: auto, i.e. exact CV where it "
                          "costs about one fit: transductive exact CV through the deformed "
                          "kernel for laprls / lapsvm, exact CV for krr and svm)")
    sel.add_argument("--task", choices=_TASKS, default=None,
                     help="classification or regression (default: guessed from the labels: "
                          "integer labels, of any count, are classes; other numbers are a "
                          "regression target; the report says which and why)")
    sel.add_argument("--folds", type=int, default=None,
                     help="number of folds t (default 10, lowered to the labeled count of "
                          "the smallest class, or of the labeled points for regression, when "
                          "that is smaller; the report says so)")
    sel.add_argument("--labeled-fraction", type=float, default=0.1,
                     help="fraction of training points keeping their label for the semi-"
                          "supervised models (default 0.1)")
    sel.add_argument("--labels-per-class", type=int, default=None,
                     help="keep this many labels per class instead of --labeled-fraction "
                          "(the low-label regime of graph propagation; CV needs at least 2)")
    sel.add_argument("--backend", choices=_BACKENDS, default="auto",
                     help="kernel models: 'dense' (an n x n kernel; exact), 'nystrom' (n x c "
                          "features from c landmark columns, never n x n) or 'auto' "
                          "(default: dense when its estimated memory fits and its "
                          "factorizations take at most about 2 minutes, else nystrom with a "
                          "note); 'dense' is refused before the search when it would not fit "
                          "or would take more than about 30 minutes")
    sel.add_argument("--n-components", type=int, default=None,
                     help="Nystrom columns of fbif (default n / 10, seed 001's c; "
                          "with a graph and for fbif-margin min(n, 300)) and of the nystrom "
                          "backend (default min(n, 300))")
    sel.add_argument("--quick", action="store_true", help="a thinner grid")
    sel.add_argument("--json", action="store_true", help="print one JSON object")
    sel.add_argument("--compare-exact", action="store_true",
                     help="also run the whole grid search with exact t-fold CV")
    sel.add_argument("--verify", default="best",
                     help="exact verification of the winner for the approximate methods "
                          "(bif, fbif, fbif-margin, newton): 'best' (default: "
                          "re-score the first-ranked candidate by exact CV until it is "
                          "verified), 'none', or a cap N on the exact re-scorings")
    sel.add_argument("--n-jobs", type=int, default=None, help="joblib workers")
    sel.add_argument("--random-state", type=int, default=0)
    sel.add_argument("--standardize", action=argparse.BooleanOptionalAction, default=True,
                     help="center and scale every feature by the training split's mean and "
                          "standard deviation, for every data source (default: on)")
    sel.add_argument("--standardize-target", action=argparse.BooleanOptionalAction,
                     default=True,
                     help="regression: center and scale the targets by the labeled training "
                          "points' mean and standard deviation (LapRLS has no "
                          "intercept); errors are then reported in standardized units and in "
                          "the data's units (default: on)")
    sel.add_argument("--verbose", "-v", action="count", default=None,
                     help="progress bars with ETA on stderr (default: on when stderr is a "
                          "terminal); -vv also prints the search's progress lines")
    sel.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    return parser


def _split_markers(y):
    """Labels as floats or class values plus the mask of unlabeled markers (None / NaN)."""
    y = np.asarray(y)
    if y.dtype.kind == "O":
        missing = np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in y],
                           dtype=bool)
        present = y[~missing]
        try:
            values = present.astype(np.float64)
        except (TypeError, ValueError):
            values = None
        if values is not None:
            y_out = np.full(len(y), np.nan)
            y_out[~missing] = values
            return y_out, missing
        return y, missing
    if y.dtype.kind == "f":
        return y, np.isnan(y)
    return y, np.zeros(len(y), dtype=bool)


def _guess_task(base, y, task=None):
    """``(task, reason)`` for the labels ``y`` of the data set ``base`` (unlabeled markers
    removed): ``task`` given, a known LIBSVM regression set, labels that are not numbers,
    integer labels (classes, however many) or other numbers (a regression target)."""
    numeric = y.dtype.kind in "fiub"
    if task is not None:
        if task == "regression" and not numeric:
            raise ValueError("--task regression needs numeric labels; these are not numbers "
                             "(use --task classification).")
        return task, "--task given"
    if base in _REGRESSION_SETS:
        return "regression", (f"{base} is a LIBSVM regression set (--task classification "
                              f"overrides)")
    if not numeric:
        return "classification", "the labels are not numbers"
    values = np.unique(y)
    if np.all(values == np.round(values)):
        return "classification", (f"{len(values)} distinct integer labels are taken for "
                                   f"classes (--task regression if they are a numeric target)")
    return "regression", (f"the labels take {len(values)} values, not all integers, so they "
                          f"are taken for a regression target (--task classification "
                          f"overrides)")


def _load(dataset):
    """Return ``(X, y, missing, base, description)``: raw features (standardization is the
    job's), labels, the mask of points whose label is None / NaN (unlabeled markers) and
    the data set's base name (for the task guess)."""
    from fastgssl import datasets

    if isinstance(dataset, tuple):
        X, y = dataset[0], dataset[1]
        name = dataset[2] if len(dataset) > 2 else "arrays"
        X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
        y, missing = _split_markers(y)
        if len(y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} labels.")
        return X, y, missing, "", f"{name} (given arrays)"
    name = str(dataset).strip()
    if not name:
        raise ValueError("--dataset is empty: give breast_cancer, digits, a LIBSVM file "
                         "path or a shared dataset name such as a1a.")
    if name in ("breast_cancer", "breast-cancer-sklearn", "default"):
        X, y = datasets.load_default(standardize=False)
        return X, y, np.zeros(len(y), dtype=bool), "breast_cancer", \
            "breast_cancer (scikit-learn)"
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X, y, np.zeros(len(y), dtype=bool), "digits", \
            "digits (scikit-learn, pixels 0-16)"
    if name == "mnist":  # the shared MNIST test images (idx files), pixels scaled to [0, 1]
        X, y = datasets.load_mnist_test()
        return np.asarray(X, dtype=np.float64), y, np.zeros(len(y), dtype=bool), "mnist", \
            "mnist (the 10,000 MNIST test images, shared datasets)"
    X, y = datasets.load_libsvm(name, dense=True)
    base = name.rsplit("/", 1)[-1].removesuffix(".gz")
    y, missing = _split_markers(y)
    return X, y, missing, base, f"{base} (LIBSVM)"


def _encode_targets(y, missing, task):
    """Class ids 0..K-1 (LIBSVM's "-1" class would read as "unlabeled" for laprls /
    lapsvm) and the class values, or float targets with NaN markers and None."""
    if missing.all():
        raise ValueError("every label is None / NaN: the select job needs labeled points.")
    present = y[~missing]
    if present.dtype.kind in "fc" and not np.all(np.isfinite(present)):
        bad = int(np.flatnonzero(~missing)[~np.isfinite(present)][0])
        raise ValueError(f"the label of point {bad} is {y[bad]}: labels must be finite "
                         f"(None / NaN marks an unlabeled point).")
    if task == "classification":
        ids = np.full(len(y), -1, dtype=np.int64)
        classes, ids[~missing] = np.unique(present, return_inverse=True)
        return ids, classes
    return np.where(missing, np.nan, y).astype(np.float64), None


def _n_folds(requested, y_fit, task, classes):
    """``(t, note)``: the folds of the search. The default is 10, lowered to the labeled
    count of the smallest class (stratified folds hold every class), or of the labeled
    points for regression; an explicit ``--folds`` above that is refused."""
    if task == "classification":
        values, counts = np.unique(y_fit[y_fit != -1], return_counts=True)
        limit = int(counts.min())
        smallest = classes[values[np.argmin(counts)]]
        smallest = smallest.item() if hasattr(smallest, "item") else smallest
        if isinstance(smallest, float) and smallest.is_integer():
            smallest = int(smallest)  # a LIBSVM file's labels are read as floats
        why = (f"the smallest class ({smallest}) has {limit} labeled point(s) in the "
               f"training split")
    else:
        limit = int(np.count_nonzero(~np.isnan(y_fit)))
        why = f"the training split has {limit} labeled point(s)"
    hidden = np.any(y_fit == -1) if task == "classification" else np.isnan(y_fit).any()
    more = ("raise --labeled-fraction or --labels-per-class" if hidden
            else "use a larger data set")
    if requested is None:
        if limit < 2:
            raise ValueError(
                f"{why}, and cross-validation needs at least 2 per class; {more}"
                + (" or, if the labels are a numeric target, pass --task regression."
                   if task == "classification" else "."))
        if limit >= _DEFAULT_FOLDS:
            return _DEFAULT_FOLDS, None
        return limit, f"folds lowered from {_DEFAULT_FOLDS} (the default) to {limit}: {why}"
    if requested > limit:
        if limit < 2:
            raise ValueError(f"--folds {requested} cannot work: {why}; {more}.")
        allow = ("stratified folds allow" if task == "classification"
                 else "there are labeled points")
        raise ValueError(f"--folds {requested} is more than {allow}: {why}. Use --folds "
                         f"{limit} or fewer, omit --folds (the default lowers it), or {more}.")
    return int(requested), None


def _standardize(X_tr, X_te):
    """Center and scale by the training rows' mean / std (constant columns: centered only)."""
    mean = X_tr.mean(axis=0)
    std = X_tr.std(axis=0)
    std[std == 0] = 1.0
    return (X_tr - mean) / std, (X_te - mean) / std


class _Progress:
    """The job's progress on stderr: tqdm bars with an ETA (level >= 1) and, at level >= 2,
    the search's own progress lines. stdout stays for the report."""

    _DONE = re.compile(r"^\[ApproxGridSearchCV\] (\d+)/(\d+)\b")
    _VERIFY = re.compile(r"^\[ApproxGridSearchCV\] verify (\d+):")

    def __init__(self, level, stream=None):
        self.level = int(level)
        self.stream = stream if stream is not None else sys.stderr

    def bar(self, desc, total, unit):
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, file=self.stream,
                    disable=self.level < 1, leave=True, mininterval=0.5, dynamic_ncols=True)

    @contextlib.contextmanager
    def search(self, desc, total):
        """A bar over the candidates of a search; the search's lines (printed on stdout)
        move the bar and are echoed to stderr at level >= 2, never left on stdout."""
        with self.bar(desc, total, "candidate") as bar:
            sink = _LineSink(lambda line: self._line(bar, line))
            with contextlib.redirect_stdout(sink):
                yield bar
            sink.flush()
            if bar.n < total:
                bar.update(total - bar.n)

    def candidates(self, title, search):
        """At level >= 2: one line per candidate of a fitted search (criterion, verified)."""
        if self.level < 2:
            return
        res = search.cv_results_
        errors = np.asarray(res["mean_cv_error"], dtype=float)
        verified = res.get("verified", np.zeros(len(errors), dtype=bool))
        order = np.argsort(errors, kind="stable")
        print(f"{title}: {len(order)} candidates, best first", file=self.stream)
        for rank, i in enumerate(order, 1):
            params = ", ".join(f"{k}={v:.4g}" for k, v in res["params"][i].items())
            flag = " (verified by exact CV)" if verified[i] else ""
            print(f"  {rank:3d}. {params}: CV {errors[i]:.4g}{flag}", file=self.stream)

    def _line(self, bar, line):
        done = self._DONE.match(line)
        verify = self._VERIFY.match(line)
        if done:
            bar.update(max(0, int(done.group(1)) - bar.n))
        elif verify:
            bar.set_postfix_str(f"{verify.group(1)} verified by exact CV", refresh=True)
        if self.level >= 2 or not (done or verify or line.startswith("[ApproxGridSearchCV]")):
            bar.write(line, file=self.stream)


class _LineSink(io.TextIOBase):
    """A text stream that hands each complete line to a callback."""

    def __init__(self, callback):
        self._callback = callback
        self._buffer = ""

    def writable(self):
        return True

    def write(self, text):
        self._buffer += text
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            if line.strip():
                self._callback(line)
        return len(text)

    def flush(self):
        if self._buffer.strip():
            self._callback(self._buffer)
        self._buffer = ""


def _grid(model, X, quick):
    """Seed 001 / 000 style grids, sigma scaled to the data's median squared distance s0.

    Widths far below s0 make K nearly the identity: every held-out prediction is then
    decided by round-off-sized kernel values and no first-order approximation of CV can
    rank them, so the default grid starts at s0 / 8.
    """
    from fastgssl.kernels import default_sigma

    s0 = float(default_sigma(X))
    if _MODELS[model].grid == "propagation":
        # no kernel width: the graph's k (one kNN search at the largest k serves all) and,
        # for the Laplace-type solutions, class mass normalization
        grid = {"n_neighbors": [5, 10, 20] if quick else [5, 10, 15, 20, 30]}
        if model in ("labelprop", "lgc"):
            grid["class_mass_normalization"] = [False, True]
        return grid
    if _MODELS[model].grid == "kernel_machine":
        sig_exp = [-2, 0, 2] if quick else [-3, -2, -1, 0, 1, 2, 3, 4]
        lam_exp = [-15, -9, -3] if quick else [-15, -12, -9, -6, -3, 0]
        return {"sigma": [s0 * 2.0**i for i in sig_exp], "lam": [2.0**i for i in lam_exp]}
    sig_exp = [-2, 0, 2] if quick else [-4, -2, 0, 2, 4]
    ga = [1e-6, 1e-4, 1e-2] if quick else [1e-6, 1e-4, 1e-2, 1.0]
    gi = [1e-4, 1e-2, 1.0] if quick else [1e-6, 1e-4, 1e-2, 1.0]
    return {"sigma": [s0 * 2.0**i for i in sig_exp], "gamma_a": ga, "gamma_i": gi}


def _estimator(model, task, random_state):
    spec = _MODELS[model]
    if task not in spec.tasks:
        others = [m for m, sp in _MODELS.items() if task in sp.tasks]
        raise ValueError(f"--model {model} needs a classification dataset, and this one is "
                         f"taken for {task}; use --model {' / '.join(others)} (or --task "
                         f"classification if the labels are classes).")
    return spec.build(task, random_state)


def _dense_plan(model, n, grid):
    """What the dense route of ``model``'s search on ``n`` training points costs at least:
    ``{"bytes", "flops", "seconds", "work"}``.

    Memory: the n x n arrays alive at once (the kernel matrix and its factorization; the
    deformed kernel's system too with a graph), as the search checks it. Work, per kernel
    width: for laprls / lapsvm one n x n LU (2 n^3 / 3 flops) per distinct ratio
    gamma_i / (n^2 gamma_a), or the two eigendecompositions of the spectral route, at least
    as much as four LUs; for krr one eigendecomposition (at least 4 n^3 / 3); for svm only the
    kernel (its refits are not bounded here). A lower bound: what it refuses would not finish
    sooner.
    """
    spec = _MODELS[model]
    widths = len(grid.get("sigma", [None]))
    n = float(n)
    if spec.grid == "manifold":
        ratios = {gi / (n * n * ga) for ga in grid["gamma_a"] for gi in grid["gamma_i"]
                  if gi > 0}
        lus = min(len(ratios), 4)
        per_width, n_arrays = lus * 2.0 * n**3 / 3.0, 3
        work = f"{widths * lus} LU factorization(s) of {int(n):,} x {int(n):,} systems"
    elif spec.square_loss:
        per_width, n_arrays = 4.0 * n**3 / 3.0, 2
        work = f"{widths} eigendecomposition(s) of {int(n):,} x {int(n):,} kernel matrices"
    else:
        per_width, n_arrays = 0.0, 2
        work = f"{widths} {int(n):,} x {int(n):,} kernel matrices (refits not counted)"
    flops = widths * per_width
    return {"bytes": int(n_arrays * 8 * n * n), "flops": flops,
            "seconds": flops / _DENSE_FLOPS_PER_SECOND, "work": work}


def _choose_backend(backend, model, n, grid, quick=True):
    """``(backend, note)``: the backend of a kernel model's search (see ``--backend``).

    Raises ValueError for ``--backend dense`` when the dense route would not fit in the
    memory available or would take longer than ``_DENSE_MAX_SECONDS``, naming the size, the
    estimate and the options that work.
    """
    from fastgssl._memory import available_memory, format_bytes

    if _MODELS[model].grid == "propagation":
        if backend != "auto":
            raise ValueError(f"--backend applies to the kernel models (krr, svm, laprls, "
                             f"lapsvm); --model {model} works on the graph alone, drop "
                             f"--backend.")
        return None, None
    if backend == "nystrom":
        return backend, None
    plan = _dense_plan(model, n, grid)
    available, source = available_memory()
    fits = available is None or plan["bytes"] <= available
    minutes = plan["seconds"] / 60.0
    estimate = (f"about {format_bytes(plan['bytes'])} of n x n arrays"
                + (f" (available: {format_bytes(available)}, {source})" if available else "")
                + f" and {plan['work']}, at least {minutes:.0f} min at "
                f"{_DENSE_FLOPS_PER_SECOND / 1e9:.0f} GFlop/s")
    if backend == "dense":
        if fits and plan["seconds"] <= _DENSE_MAX_SECONDS:
            return backend, None
        why = "would not fit in memory" if not fits else (
            f"would take more than {_DENSE_MAX_SECONDS / 60:.0f} min")
        raise ValueError(
            f"--backend dense on {n:,} training points {why}: {estimate}. Use --backend "
            f"nystrom (n x c features, never n x n; --n-components sets c, default 300), "
            f"or {'a smaller data set' if quick else 'a smaller grid (--quick) or data set'}.")
    if fits and plan["seconds"] <= _DENSE_AUTO_SECONDS:
        return "dense", None
    return "nystrom", (f"backend nystrom: the dense route on {n:,} training points needs "
                       f"{estimate}; --backend dense forces it")


def _hide_labels(y, fraction, task, rng, per_class=None):
    """Keep ``fraction`` of the labels (stratified for classification), or ``per_class``
    labels of every class; mark the rest."""
    if not 0 < fraction <= 1:
        raise ValueError(f"--labeled-fraction must be in (0, 1], got {fraction}.")
    if per_class is not None:
        if task != "classification":
            raise ValueError("--labels-per-class needs a classification task; use "
                             "--labeled-fraction for regression.")
        if isinstance(per_class, bool) or not isinstance(per_class, (int, np.integer)) \
                or per_class < 1:
            raise ValueError(f"--labels-per-class must be a positive integer, got "
                             f"{per_class!r}.")
    n = len(y)
    keep = np.zeros(n, dtype=bool)
    if task == "classification":
        for c in np.unique(y):
            members = np.flatnonzero(y == c)
            k = max(1, int(round(fraction * len(members))))
            if per_class is not None:
                k = min(int(per_class), len(members))
            keep[rng.choice(members, k, replace=False)] = True
        y_semi = np.where(keep, y, -1)
    else:
        keep[rng.choice(n, max(1, int(round(fraction * n))), replace=False)] = True
        y_semi = np.where(keep, y.astype(float), np.nan)
    return y_semi


def _label_spreading(X_tr, y_fit, X_te, y_te, clock, **params):
    """scikit-learn's LabelSpreading: its test error, time and the test points it could
    not score. A test row whose kernel weights, or whose neighbours' label distributions,
    are all 0 (the RBF kernel at the default gamma underflows far from the training points;
    on a kNN graph the spreading may not reach a neighbourhood) gets 0/0 probabilities:
    scikit-learn warns and predicts its first class. Counted here, the warning not leaked."""
    from sklearn.semi_supervised import LabelSpreading

    with clock.split() as spent, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ls = LabelSpreading(**params).fit(X_tr, y_fit)
        proba = ls.predict_proba(X_te)
        pred = ls.classes_[np.argmax(np.nan_to_num(proba, nan=-1.0), axis=1)]
    return {"params": params, "test_error": float(np.mean(pred != y_te)),
            "seconds": spent["run"],
            "n_test_unscored": int(np.count_nonzero(np.isnan(proba).any(axis=1)))}


def _baselines(X_tr, y_fit, X_te, y_te, folds, quick, random_state, n_neighbors, clock,
               progress, dense=True):
    """What the unlabeled points buy: an SVM selected on the labeled points alone (same
    folds, exact search), and scikit-learn's LabelSpreading on the same kNN graph size k as
    the model and at its defaults (an RBF kernel on every pair: a dense n x n matrix and its
    copies, skipped with a reason when the model's own dense route was, ``dense=False``)."""
    from fastgssl.cv import ApproxGridSearchCV
    from fastgssl.models import SVM

    labeled = y_fit != -1
    out = {}
    with progress.bar("baselines", 3, "model") as bar:
        with clock.split() as spent:
            svm = ApproxGridSearchCV(SVM(random_state=random_state),
                                     _grid("svm", X_tr[labeled], quick), cv=folds,
                                     random_state=random_state).fit(X_tr[labeled],
                                                                    y_fit[labeled])
        out["svm_labeled_only"] = {
            "test_error": _test_error(svm.best_estimator_, X_te, y_te, "classification"),
            "seconds": spent["run"], "best_params": {
                k: float(v) for k, v in svm.best_params_.items()},
            "method": f"{folds}-fold {svm.method_}" + (" + verify" if svm.verify_ else "")}
        bar.update(1)
        out["label_spreading_knn"] = _label_spreading(
            X_tr, y_fit, X_te, y_te, clock, kernel="knn", n_neighbors=int(n_neighbors))
        bar.update(1)
        if dense:
            out["label_spreading_defaults"] = _label_spreading(X_tr, y_fit, X_te, y_te, clock)
        else:
            out["label_spreading_defaults"] = {
                "params": {}, "skipped": (
                    f"its RBF kernel is a dense {X_tr.shape[0]:,} x {X_tr.shape[0]:,} matrix "
                    f"(with copies), and the model's dense route was already too large")}
        bar.update(1)
    return out


def _test_error(est, X, y, task):
    pred = est.predict(X)
    if task == "classification":
        return float(np.mean(pred != y))
    return float(np.mean((pred - y) ** 2))


def select(dataset="digits", model=None, method=None, folds=None, labeled_fraction=0.1,
           n_components=None, quick=False, compare_exact=False, n_jobs=None, random_state=0,
           verbose=0, verify="best", standardize=True, standardize_target=True, task=None,
           labels_per_class=None, backend="auto"):
    """Run the ``select`` job and return its report as a dict (what ``--json`` prints).

    ``dataset`` is a name (``"digits"``, ``"breast_cancer"``, a LIBSVM path or shared name)
    or a tuple ``(X, y[, name])``; labels that are None / NaN mark unlabeled points: the
    semi-supervised models (laprls, lapsvm) use them as extra unlabeled training points, the
    supervised ones leave them out (both said in the report). ``-1`` is a class here (as in
    LIBSVM files), not a marker: the job hides labels itself (``labeled_fraction``).
    ``task`` (``"classification"`` / ``"regression"``) overrides the guess from the labels;
    ``folds=None`` is 10 lowered to what the smallest labeled class allows.
    ``labels_per_class`` keeps that many labels per class instead of ``labeled_fraction``.
    ``backend`` (``"auto"``, ``"dense"``, ``"nystrom"``): the kernel models' backend; auto
    takes nystrom when the dense route would not fit or finish soon (a note says so), and
    ``"dense"`` is refused with a ValueError when it would not fit or finish.
    ``verbose``: 0 silent, 1 progress bars on stderr, 2 also the search's lines.
    """
    from fastgssl._jit import CompileClock

    with CompileClock() as clock:
        report = _select(clock, dataset, model, method, folds, labeled_fraction, n_components,
                         quick, compare_exact, n_jobs, random_state, verbose, verify,
                         standardize, standardize_target, task, labels_per_class, backend)
        report["compile_seconds"] = clock.seconds
    return report


def _split(X, y, task, random_state):
    """The 70 / 30 split (stratified for classification)."""
    from sklearn.model_selection import train_test_split

    if task == "classification":
        values, counts = np.unique(y, return_counts=True)
        if counts.min() < 2:
            raise ValueError(
                f"{np.count_nonzero(counts < 2)} class(es) have a single labeled point, and "
                f"the 30 % test split is stratified (every class on both sides); if the "
                f"labels are a numeric target, pass --task regression.")
    return train_test_split(X, y, test_size=0.3, random_state=random_state,
                            stratify=y if task == "classification" else None)


def _select(clock, dataset, model, method, folds, labeled_fraction, n_components, quick,
            compare_exact, n_jobs, random_state, verbose, verify, standardize,
            standardize_target, task, labels_per_class=None, backend="auto"):
    from fastgssl.cv import ApproxGridSearchCV, cv_result

    progress = _Progress(verbose)
    X_all, y_raw, missing, base, description = _load(dataset)
    task, task_reason = _guess_task(base, y_raw[~missing], task)
    y_all, classes = _encode_targets(y_raw, missing, task)
    if model is None:
        model = _DEFAULT_MODEL[task]
    if method is None:
        method = "auto"
    if backend not in _BACKENDS:
        raise ValueError(f"--backend must be one of {', '.join(_BACKENDS)}, got {backend!r}.")
    if method == "exact-quadratic" and not _MODELS[model].square_loss:
        squares = " or ".join(m for m, sp in _MODELS.items() if sp.square_loss)
        raise ValueError(f"--method exact-quadratic needs the square loss: use --model "
                         f"{squares}.")
    est = _estimator(model, task, random_state)
    semi = _MODELS[model].semi_supervised
    X, y = X_all[~missing], y_all[~missing]
    X_unl = X_all[missing]
    X_tr, X_te, y_tr, y_te = _split(X, y, task, random_state)
    notes = []
    n_marked = int(missing.sum())
    if n_marked:
        if semi:
            X_tr = np.vstack([X_tr, X_unl])
            notes.append(f"{n_marked} point(s) with a None / NaN label joined the training "
                         f"split as unlabeled points")
        else:
            notes.append(f"{n_marked} point(s) with a None / NaN label were left out (a "
                         f"supervised model has no use for them; laprls / lapsvm would use "
                         f"them)")
    if standardize:
        X_tr, X_te = _standardize(X_tr, X_te)
    features = ("standardized (training split's mean and standard deviation)" if standardize
                else "as loaded (--no-standardize)")
    rng = np.random.default_rng(random_state)
    y_fit = (_hide_labels(y_tr, labeled_fraction, task, rng, labels_per_class) if semi
             else y_tr)
    if n_marked and semi:
        marker = np.full(n_marked, -1 if task == "classification" else np.nan,
                         dtype=y_fit.dtype)
        y_fit = np.concatenate([y_fit, marker])
    folds, folds_note = _n_folds(folds, y_fit, task, classes)
    if folds_note:
        notes.append(folds_note)
    target = None
    scale2 = 1.0
    if task == "regression":
        labeled_y = y_fit[~np.isnan(y_fit)]
        if standardize_target:
            mu = float(labeled_y.mean())
            sd = float(labeled_y.std()) or 1.0
            y_fit = (y_fit - mu) / sd
            y_te = (y_te - mu) / sd
            scale2 = sd * sd
            target = {"standardized": True, "mean": mu, "std": sd}
        else:
            target = {"standardized": False}
    if task == "classification":
        criterion = "0-1 error"
        units = "fraction of misclassified points"
    elif standardize_target:
        criterion = "mean squared error"
        units = (f"squared standardized target units (multiply by std^2 = {scale2:.6g} for "
                 f"the data's units)")
    else:
        criterion = "mean squared error"
        units = "squared target units (targets as loaded)"
    grid = _grid(model, X_tr, quick)
    n_cand = int(np.prod([len(v) for v in grid.values()]))
    # before any n x n work: the dense route refused (--backend dense) or replaced (auto)
    # when it would not fit or finish
    backend, backend_note = _choose_backend(backend, model, X_tr.shape[0], grid, quick)
    if backend_note:
        notes.append(backend_note)
    if backend is not None:
        est.set_params(backend=backend)
        if backend == "nystrom" and n_components is not None:
            est.set_params(n_components=int(n_components))
    verify = _parse_verify(verify)  # validated for every method, used by approximate ones
    if method in ("exact", "exact-quadratic", "auto"):
        verify = None  # auto verifies by itself where it picks an approximation
    search_verbose = min(int(verbose), 2)

    with warnings.catch_warnings(record=True) as caught, clock.split() as spent:
        warnings.filterwarnings("always", message="verify=", category=UserWarning)
        with progress.search(f"{folds}-fold {method} search", n_cand):
            search = ApproxGridSearchCV(est, grid, cv=folds, method=method,
                                        n_components=n_components, n_jobs=n_jobs,
                                        random_state=random_state, verbose=search_verbose,
                                        verify=verify).fit(X_tr, y_fit)
    progress.candidates(f"{folds}-fold {method} search", search)
    cap_messages = [str(w.message) for w in caught if str(w.message).startswith("verify=")]
    for w in caught:  # everything else is passed on unchanged
        if not str(w.message).startswith("verify="):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if method == "auto":  # what the default picked, and its verification
        method = search.method_
        verify = search.verify_
    best = search.best_estimator_
    test_error = _test_error(best, X_te, y_te, task)
    report = {
        "dataset": description,
        "task": task,
        "task_reason": task_reason,
        "model": model,
        "backend": backend,
        "n_train": int(X_tr.shape[0]),
        "n_labeled": int(np.count_nonzero(y_fit != -1) if task == "classification"
                         else np.count_nonzero(~np.isnan(y_fit))),
        "n_test": int(X_te.shape[0]),
        "n_unlabeled_given": n_marked,
        "features": features,
        "target": target,
        "method": method,
        "folds": folds,
        "grid_size": n_cand,
        "best_params": {k: float(v) for k, v in search.best_params_.items()},
        "cv_criterion": search.best_cv_error_,
        "criterion": criterion,
        "criterion_units": units,
        "test_error": test_error,
        "search_seconds": spent["run"],
        "search_compile_seconds": spent["compile"],
        "seconds_per_grid_point": spent["run"] / n_cand,
        "verify": verify,
        "n_verified": search.n_verified_,
        "notes": notes,
    }
    report["protocol"] = search.protocol_
    if semi and task == "classification":
        report["baselines"] = _baselines(X_tr, y_fit, X_te, y_te, folds, quick, random_state,
                                         best.n_neighbors, clock, progress,
                                         dense=backend != "nystrom")
    if task == "regression" and standardize_target:
        report["test_error_data_units"] = test_error * scale2
        report["cv_criterion_data_units"] = search.best_cv_error_ * scale2
    # approximate vs exact CV at the selected point: one run of each
    point = type(est)(**best.get_params())
    with progress.bar("CV at the chosen point", 2, "run") as bar:
        with clock.split() as t_approx:
            approx = cv_result(point, X_tr, y_fit, search.folds_, method=method,
                               **({"n_components": n_components}
                                  if method in ("fbif", "fbif-margin") else {}))
        bar.update(1)
        with clock.split() as t_exact:
            exact = cv_result(point, X_tr, y_fit, search.folds_, method="exact")
        bar.update(1)
    report["selected_point"] = {
        "approx_cv": approx.score,
        "exact_cv": exact.score,
        "approx_seconds": t_approx["run"],
        "exact_seconds": t_exact["run"],
        "speedup": t_exact["run"] / max(t_approx["run"], 1e-12),
        "approx_exact_gap": abs(approx.score - exact.score),
        "exact_graph_mode": exact.graph_mode,
        "approx_form": approx.form,
    }
    gap = report["selected_point"]["approx_exact_gap"]
    report["warnings"] = list(cap_messages)
    exact_method = method in ("exact", "exact-quadratic")
    verified = bool(verify) and bool(search.cv_results_["verified"][search.best_index_])
    # "exact": the criterion is exact CV; "verified": an approximation whose winner was
    # re-scored by exact CV; "unverified": an approximation left as it was
    report["winner_cv"] = "exact" if exact_method else "verified" if verified else "unverified"
    report["winner_verified"] = None if exact_method else verified
    if not exact_method and not verified and gap > max(0.005, 0.25 * exact.score):
        report["warnings"].append(
            f"at the chosen point the {method} criterion ({approx.score:.4f}) differs from "
            f"exact CV ({exact.score:.4f}) by {gap:.4f}; first-order CV approximations are "
            f"optimistic for weakly regularized models (high leverage). "
            + ("Compare with the exact search reported above." if compare_exact
               else "Use --verify best, check with --compare-exact or use --method exact.")
        )
    if compare_exact:
        with progress.search(f"{folds}-fold exact search", n_cand), clock.split() as t_ex:
            ex = ApproxGridSearchCV(est, grid, cv=search.folds_, method="exact", n_jobs=n_jobs,
                                    random_state=random_state,
                                    verbose=search_verbose).fit(X_tr, y_fit)
        progress.candidates(f"{folds}-fold exact search", ex)
        report["exact_search"] = {
            "best_params": {k: float(v) for k, v in ex.best_params_.items()},
            "cv_criterion": ex.best_cv_error_,
            "test_error": _test_error(ex.best_estimator_, X_te, y_te, task),
            "search_seconds": t_ex["run"],
            "speedup": t_ex["run"] / max(spent["run"], 1e-12),
        }
    return report


def _parse_verify(value):
    text = str(value).strip().lower()
    if value is None or text in ("none", "no", "off"):
        return None
    if text == "best":
        return "best"
    try:
        cap = int(value)
    except ValueError:
        cap = 0
    if cap < 1:
        raise ValueError(f"--verify must be 'best', 'none' or a positive integer, got {value!r}.")
    return cap


def _print_report(r, out):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"dataset      {r['dataset']}: {r['n_train']} train ({r['n_labeled']} labeled), "
      f"{r['n_test']} test")
    p(f"task         {r['task']}: {r['task_reason']}")
    p(f"features     {r['features']}")
    if r.get("target"):
        t = r["target"]
        p("targets      " + (f"standardized (labeled training mean {t['mean']:.4g}, std "
                             f"{t['std']:.4g}; --no-standardize-target keeps them)"
                             if t["standardized"] else "as loaded (--no-standardize-target)"))
    for note in r.get("notes", []):
        p(f"note         {note}")
    p(f"model        {r['model']}" + (f" ({r['backend']} backend)" if r.get("backend") else "")
      + f", {r['folds']}-fold {r['method']} ({r['protocol']}) over "
      f"{r['grid_size']} grid points")
    p("chosen       " + ", ".join(f"{k}={v:.4g}" for k, v in r["best_params"].items()))
    p(f"units        {r['criterion']} in {r['criterion_units']}")
    data_units = lambda key: (f" ({r[key]:.4g} in the data's units)"  # noqa: E731
                              if key in r else "")
    p(f"CV criterion {r['cv_criterion']:.4f}{data_units('cv_criterion_data_units')} "
      f"({r['criterion']}, labeled held-out points)")
    p(f"test error   {r['test_error']:.4f}{data_units('test_error_data_units')} "
      f"({r['criterion']}, 30 % held-out split)")
    p(f"search time  {r['search_seconds']:.2f} s ({1e3 * r['seconds_per_grid_point']:.1f} ms "
      f"per grid point)" + (f", {r['n_verified']} candidate(s) re-scored by exact CV "
                           f"(--verify {r['verify']})" if r["verify"] else ""))
    if r["compile_seconds"] > 0:
        p(f"compile time {r['compile_seconds']:.2f} s (Numba compiling its kernels on a first "
          f"run, {r['search_compile_seconds']:.2f} s of it during the search; left out of the "
          f"other times, and read from Numba's disk cache on later runs)")
    else:
        p("compile time 0 s (every kernel read from Numba's disk cache)")
    s = r["selected_point"]
    p(f"at the chosen point: {r['method']} CV {s['approx_cv']:.4f} in "
      f"{s['approx_seconds']:.3f} s; exact {r['folds']}-CV {s['exact_cv']:.4f} in "
      f"{s['exact_seconds']:.3f} s ({s['speedup']:.1f}x)")
    if "baselines" in r:
        b = r["baselines"]
        s_ = b["svm_labeled_only"]
        p(f"baseline     SVM on the {r['n_labeled']} labeled points alone ({s_['method']}): "
          f"test error {s_['test_error']:.4f} ({s_['seconds']:.2f} s)")
        for key, what in (("label_spreading_knn", "kNN graph as the model's"),
                          ("label_spreading_defaults", "its defaults")):
            ls = b[key]
            args = ", ".join(f"{k}={v!r}" for k, v in ls["params"].items())
            if "skipped" in ls:
                p(f"baseline     scikit-learn LabelSpreading({args}), {what}: skipped, "
                  f"{ls['skipped']}")
                continue
            unscored = (f"; {ls['n_test_unscored']} test point(s) got 0/0 probabilities and "
                        f"its first class" if ls["n_test_unscored"] else "")
            p(f"baseline     scikit-learn LabelSpreading({args}), {what}: test error "
              f"{ls['test_error']:.4f} ({ls['seconds']:.2f} s{unscored})")
    if "exact_search" in r:
        e = r["exact_search"]
        p("exact search chose " + ", ".join(f"{k}={v:.4g}" for k, v in e["best_params"].items())
          + f": CV {e['cv_criterion']:.4f}, test error {e['test_error']:.4f}, "
          f"{e['search_seconds']:.2f} s ({e['speedup']:.1f}x the {r['method']} search)")


def _level(args):
    if args.quiet:
        return 0
    if args.verbose is not None:
        return args.verbose
    try:
        return 1 if sys.stderr.isatty() else 0
    except (AttributeError, ValueError):
        return 0


def main(argv=None):
    """Entry point of the ``fastgssl`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.folds is not None and args.folds < 2:
        parser.error(f"--folds must be >= 2, got {args.folds}")
    try:
        report = select(dataset=args.dataset, model=args.model, method=args.method,
                        folds=args.folds, labeled_fraction=args.labeled_fraction,
                        n_components=args.n_components, quick=args.quick,
                        compare_exact=args.compare_exact, n_jobs=args.n_jobs,
                        random_state=args.random_state, verbose=_level(args),
                        verify=args.verify, standardize=args.standardize,
                        standardize_target=args.standardize_target, task=args.task,
                        labels_per_class=args.labels_per_class, backend=args.backend)
    except (ValueError, OSError, MemoryError) as exc:
        print(f"fastgssl select: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_report(report, sys.stdout)
    for message in report["warnings"]:  # on stderr too, so --json users see them
        print(f"fastgssl select: warning: {message}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
