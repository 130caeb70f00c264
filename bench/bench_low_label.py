"""Graph propagation at 1-10 labels per class beside scikit-learn and graphlearning (issue 24).

Every method runs twice, on every label draw:

- **on the same weight matrix**: graphlearning's ``gl.weightmatrix.knn(X, 10)`` (Annoy search,
  Gaussian weights exp(-4 |x_i - x_j|^2 / d_k(x_i)^2), (W + W^T) / 2), diagonal zeroed and
  symmetrized once more (a no-op on its output). fastgssl receives it as ``graph=W``,
  graphlearning as its ``W``, scikit-learn's ``LabelSpreading`` (defaults: alpha 0.2, 30
  iterations) through a callable kernel that returns W. Times are solves (graph excluded).
- **on each library's own graph**: ``LabelSpreading(kernel="knn", n_neighbors=10)`` at its
  defaults and fastgssl's estimators at their defaults (``graph="knn"``, n_neighbors=10,
  exact search), end to end; graphlearning's own graph *is* W above, so its rows there are W's
  accuracies with the time of one ``gl.weightmatrix.knn`` call added to the median solve.

Methods: scikit-learn ``LabelSpreading``; graphlearning ``gl.ssl.laplace``, ``gl.ssl.poisson``
(defaults: CG stopped at an absolute residual 1e-3) and ``gl.ssl.poisson_mbo`` with
``class_priors``; fastgssl ``LabelPropagation``, ``LabelPropagation(class_mass_normalization=
True)``, ``LocalGlobalConsistency(alpha=0.99)``, ``PoissonLearning()`` and ``PoissonMBO`` with
``class_priors``; issue 41 adds graphlearning's ``gl.ssl.laplace(W, reweighting=...)`` for
"wnll", "properly" (with the features X) and "poisson", and ``gl.ssl.volume_mbo`` with the
priors, beside fastgssl's ``LabelPropagation(reweighting=...)`` and ``VolumeMBO`` (the goals
table then says whether each is within 0.2 points of graphlearning's on the same W and no
slower). Both PoissonMBOs (and both VolumeMBOs) get the same priors: the true class shares of
the whole data set, as graphlearning's examples do (``gl.utils.class_priors(labels)``); nobody
else gets priors (fastgssl's PoissonLearning estimates them from the labels, its default).

Data: the shared MNIST test images (10,000 x 784, pixels in [0, 1]; the shared folder has no
training images), letter (letter.scale + letter.scale.t, 20,000 x 16, 26 classes) at 1, 2, 5
and 10 labels per class (``hide_labels``, seeds 0..9); ``make_classification(n_samples=20000,
n_features=30, random_state=0)`` with 150 labels drawn uniformly (seeds 0..9) and the goal case
``make_classification(n_samples=8000, n_features=30, random_state=0)`` with 80 labels, where
``PoissonLearning()`` should reach 0.68 and ``LabelPropagation()`` should emit
``fastgssl.ClassShareWarning`` (every fastgssl fit records whether it warned).

letter costs more: its fits take 5-20x MNIST's (26 classes), and its 10-NN graph is
disconnected (22-23 components: clusters of exact duplicates; 53 points have 10 or more exact
duplicates, which give ``gl.weightmatrix.knn`` 0 / 0 = NaN weights, set here to 1, the weight
of distance 0). On it graphlearning's Poisson CG, whose right-hand side is not consistent on
each component, does not converge (one draw each: 49 s and accuracy 0.033 at 1 label per
class, 714 s and 0.042 at 10) and its PoissonMBO's volume projection takes about 45 s per
call (21 calls per fit). The full run therefore uses 3 letter draws per cell and runs neither
``gl.ssl.poisson`` nor ``gl.ssl.poisson_mbo`` on letter (``--letter-draws``,
``--letter-gl-poisson-draws``, ``--letter-gl-mbo-draws`` change this); goals compare on the
draws both libraries ran.

Accuracy is measured on the unlabeled points of every draw (mean and standard deviation over
the draws). An end-to-end fit repeats the same deterministic kNN search on every draw, so the
own-graph rows time only the first ``--timed-draws`` draws per cell end to end; the remaining
draws reuse the graph that library built (fastgssl: the fitted ``graph_``; scikit-learn: its
connectivity graph through a callable kernel), and every timed draw checks that the reuse
gives the identical prediction (``reuse_identical`` in the JSON). Fit times are medians over
the fits of a method on a data set.

The scale row: a 10-class Gaussian mixture (``make_gaussian_mixture``, n = 100,000, d = 50,
sep 0.5), one ``gl.weightmatrix.knn`` graph built once, 10 labels per class; fastgssl
``PoissonLearning(graph=W)`` at its default ``rtol=1e-6`` and at ``rtol=1e-3`` against
``gl.ssl.poisson(W)``, interleaved, median of ``--scale-repeats``; ratio = graphlearning's
median / fastgssl's; the relative residual ||L u - b|| / ||b|| of each solution is reported.

Usage::

    python bench/bench_low_label.py --quick                  # about 10 minutes
    OPENBLAS_NUM_THREADS=1 nice -n 5 python bench/bench_low_label.py --json low_labels.json

The tables go to stdout (markdown), progress to stderr. The machine is shared: compare the
ratios of one run, not seconds across runs.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from low_label_report import ISSUE41_PAIRS, SK_OWN, SK_W, report  # noqa: E402, F401

RATES = (1, 2, 5, 10)
K = 10  # neighbours, every graph

OURS = {
    "LabelPropagation": lambda g, pri: _ours("LabelPropagation", graph=g),
    "LabelPropagation(cmn)": lambda g, pri: _ours("LabelPropagation", graph=g,
                                                  class_mass_normalization=True),
    "LocalGlobalConsistency(0.99)": lambda g, pri: _ours("LocalGlobalConsistency", graph=g,
                                                         alpha=0.99),
    "PoissonLearning": lambda g, pri: _ours("PoissonLearning", graph=g),
    "PoissonMBO(priors)": lambda g, pri: _ours("PoissonMBO", graph=g, class_priors=pri),
    # issue 41: reweighted Laplace learning and VolumeMBO
    "LabelPropagation(wnll)": lambda g, pri: _ours("LabelPropagation", graph=g,
                                                   reweighting="wnll"),
    "LabelPropagation(properly)": lambda g, pri: _ours("LabelPropagation", graph=g,
                                                       reweighting="properly"),
    "LabelPropagation(poisson)": lambda g, pri: _ours("LabelPropagation", graph=g,
                                                      reweighting="poisson"),
    "VolumeMBO(priors)": lambda g, pri: _ours("VolumeMBO", graph=g, class_priors=pri,
                                              random_state=0),
}
GL = {
    "gl laplace": lambda gl, W, pri, X: gl.ssl.laplace(W),
    "gl poisson": lambda gl, W, pri, X: gl.ssl.poisson(W),
    "gl poisson_mbo(priors)": lambda gl, W, pri, X: gl.ssl.poisson_mbo(W, class_priors=pri),
    "gl laplace(wnll)": lambda gl, W, pri, X: gl.ssl.laplace(W, reweighting="wnll"),
    "gl laplace(properly)": lambda gl, W, pri, X: gl.ssl.laplace(W, reweighting="properly",
                                                                X=X),
    "gl laplace(poisson)": lambda gl, W, pri, X: gl.ssl.laplace(W, reweighting="poisson"),
    "gl volume_mbo(priors)": lambda gl, W, pri, X: gl.ssl.volume_mbo(W, class_priors=pri),
}


def _ours(name, **params):
    import fastgssl.models as models

    return getattr(models, name)(n_neighbors=K, **params)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {msg}", file=sys.stderr,
          flush=True)


# ---------------------------------------------------------------------------------------------
# graphs and fits
# ---------------------------------------------------------------------------------------------


class FixedAffinity:
    """A scikit-learn ``LabelSpreading`` kernel returning a given (n, n) affinity."""

    def __init__(self, W):
        self.W = W

    def __call__(self, A, B):
        return self.W


def shared_graph(gl, X):
    """graphlearning's kNN weight matrix, diagonal zeroed and symmetrized; its build time; and
    the number of NaN weights set to 1.

    ``gl.weightmatrix.knn`` divides by the squared distance to the k-th neighbour, which is 0
    for a point with k or more exact duplicates (letter has 53 such points): 0 / 0 gives NaN
    weights between the duplicates. They are set to 1, the weight of distance 0 (exp(0)); the
    count is reported."""
    t0 = time.perf_counter()
    W = gl.weightmatrix.knn(X, K)
    seconds = time.perf_counter() - t0
    W = sp.csr_matrix(W, dtype=np.float64)
    nan = np.isnan(W.data)
    W.data[nan] = 1.0
    W.setdiag(0)
    W.eliminate_zeros()
    W = ((W + W.T) * 0.5).tocsr()
    return W, seconds, int(nan.sum())


def n_components(W):
    from scipy.sparse.csgraph import connected_components

    return int(connected_components(W, directed=False)[0])


def sklearn_connectivity(X):
    """The graph ``LabelSpreading(kernel="knn", n_neighbors=10)`` builds in ``fit``."""
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=K).fit(X)
    return nn.kneighbors_graph(nn._fit_X, K, mode="connectivity")


def fit_ours(make, graph, X, y_train, priors):
    from fastgssl import ClassShareWarning

    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ClassShareWarning)
        t0 = time.perf_counter()
        model = make(graph, priors).fit(X, y_train)
        seconds = time.perf_counter() - t0
    warned = any(issubclass(w.category, ClassShareWarning) for w in caught)
    return np.asarray(model.transduction_), seconds, warned, model


def fit_sklearn(kernel, X, y_train):
    from sklearn.semi_supervised import LabelSpreading

    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at 30 iterations
        t0 = time.perf_counter()
        if kernel == "knn":
            model = LabelSpreading(kernel="knn", n_neighbors=K).fit(X, y_train)
        else:
            model = LabelSpreading(kernel=kernel).fit(X, y_train)
        seconds = time.perf_counter() - t0
    return np.asarray(model.transduction_), seconds


def fit_gl(make, gl, W, y_train, priors, X):
    lab = np.flatnonzero(y_train >= 0)
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        pred = make(gl, W, priors, X).fit_predict(lab, y_train[lab])
        seconds = time.perf_counter() - t0
    return np.asarray(pred), seconds


def accuracy(pred, y, y_train):
    unl = y_train == -1
    return float(np.mean(pred[unl] == y[unl]))


# ---------------------------------------------------------------------------------------------
# one data set
# ---------------------------------------------------------------------------------------------


def new_cell():
    return {"acc": [], "time": [], "warned": [], "reuse_time": [], "reuse_identical": []}


def run_case(name, X, y, draws, gl, timed_draws, max_draws=None):
    """All methods on every draw. ``draws``: list of (column key, list of y_train).

    ``y`` is encoded 0..k-1 and every draw holds every class (graphlearning's one-hot needs it,
    and the priors are in the order of ``classes_``). ``max_draws`` caps the draws per cell of
    a method (graphlearning's Poisson solvers on letter, see ``main``)."""
    max_draws = max_draws or {}
    k = int(y.max()) + 1
    priors = np.bincount(y, minlength=k) / y.size
    log(f"{name}: n={X.shape[0]} d={X.shape[1]} classes={k}; graphlearning graph ...")
    W, gl_graph_s, n_nan = shared_graph(gl, X)
    log(f"{name}: gl.weightmatrix.knn {gl_graph_s:.2f} s, nnz {W.nnz}, NaN weights set to 1: "
        f"{n_nan}, connected components {n_components(W)}")
    A_sk = sklearn_connectivity(X)
    out = {
        "n": int(X.shape[0]), "d": int(X.shape[1]), "n_classes": k,
        "class_priors": priors.tolist(), "gl_graph_seconds": gl_graph_s, "W_nnz": int(W.nnz),
        "W_nan_weights_set_to_1": n_nan, "W_components": n_components(W),
        "sklearn_graph_components": n_components(A_sk + A_sk.T),
        "max_draws": dict(max_draws), "columns": [c for c, _ in draws],
        "same_W": {}, "own_graph": {},
    }
    same = out["same_W"]
    own = out["own_graph"]
    G_ours = None
    for col, y_trains in draws:
        for d, y_train in enumerate(y_trains):
            assert np.unique(y_train[y_train >= 0]).size == k, "a draw misses a class"
            # -- the same W ------------------------------------------------------------
            pred, s = fit_sklearn(FixedAffinity(W), X, y_train)
            _record(same, SK_W, col, accuracy(pred, y, y_train), s)
            for key, make in GL.items():
                if d < max_draws.get(key, len(y_trains)):
                    pred, s = fit_gl(make, gl, W, y_train, priors, X)
                    _record(same, key, col, accuracy(pred, y, y_train), s)
                else:
                    same.setdefault(key, {}).setdefault(col, new_cell())
            for key, make in OURS.items():
                pred, s, warned, _ = fit_ours(make, W, X, y_train, priors)
                _record(same, key, col, accuracy(pred, y, y_train), s, warned)
            # -- each library's own graph --------------------------------------------
            # draws < timed_draws run end to end; draw 0 also checks that reusing the graph
            # gives the identical prediction (the other draws reuse it)
            timed = d < timed_draws
            if timed:
                pred, s = fit_sklearn("knn", X, y_train)
                reuse = None
                if d == 0:
                    again, s_reuse = fit_sklearn(FixedAffinity(A_sk), X, y_train)
                    reuse = (s_reuse, bool(np.array_equal(pred, again)))
                _record(own, SK_OWN, col, accuracy(pred, y, y_train), s, reuse=reuse)
            else:
                pred, s_reuse = fit_sklearn(FixedAffinity(A_sk), X, y_train)
                _record(own, SK_OWN, col, accuracy(pred, y, y_train), None, reuse=(s_reuse, None))
            for key, make in OURS.items():
                if timed or G_ours is None:
                    pred, s, warned, model = fit_ours(make, "knn", X, y_train, priors)
                    reuse = None
                    if G_ours is None:
                        G_ours = model.graph_
                        out["ours_graph_components"] = n_components(G_ours)
                    if d == 0:
                        again, s_reuse, _, _ = fit_ours(make, G_ours, X, y_train, priors)
                        reuse = (s_reuse, bool(np.array_equal(pred, again)))
                    _record(own, key, col, accuracy(pred, y, y_train), s, warned, reuse=reuse)
                else:
                    pred, s_reuse, warned, _ = fit_ours(make, G_ours, X, y_train, priors)
                    _record(own, key, col, accuracy(pred, y, y_train), None, warned,
                            reuse=(s_reuse, None))
            log(f"{name} {col} draw {d}: " + ", ".join(
                f"{m} {same[m][col]['acc'][-1]:.3f}" for m in
                ("gl poisson", "PoissonLearning", "gl poisson_mbo(priors)", "PoissonMBO(priors)")
                if same[m][col]["acc"]))
    # graphlearning on its own graph = W: the graph's build time added to the median solve
    for key in GL:
        own[key] = {col: {"acc": same[key][col]["acc"],
                          "time": ([gl_graph_s + statistics.median(same[key][col]["time"])]
                                   if same[key][col]["time"] else []),
                          "warned": [], "reuse_time": [], "reuse_identical": []}
                    for col in same[key]}
    out["ours_graph_nnz"] = None if G_ours is None else int(G_ours.nnz)
    return out


def _record(table, method, col, acc, seconds, warned=None, reuse=None):
    cell = table.setdefault(method, {}).setdefault(col, new_cell())
    cell["acc"].append(acc)
    if seconds is not None:
        cell["time"].append(seconds)
    if warned is not None:
        cell["warned"].append(bool(warned))
    if reuse is not None:
        cell["reuse_time"].append(reuse[0])
        if reuse[1] is not None:
            cell["reuse_identical"].append(reuse[1])


# ---------------------------------------------------------------------------------------------
# the scale row
# ---------------------------------------------------------------------------------------------


def relative_residuals(W, U, y_train):
    """max over classes of ||L u_c - b_c|| / ||b_c|| for Poisson learning's system."""
    k = U.shape[1]
    lab = np.flatnonzero(y_train >= 0)
    onehot = np.eye(k)[y_train[lab]]
    B = np.zeros_like(U)
    B[lab] = onehot - onehot.mean(axis=0)
    d = np.asarray(W.sum(axis=1)).ravel()
    R = d[:, None] * U - W @ U - B
    return float(np.max(np.linalg.norm(R, axis=0) / np.linalg.norm(B, axis=0)))


def run_scale(gl, n, d, per_class, repeats):
    from fastgssl.datasets import hide_labels, make_gaussian_mixture
    from fastgssl.models import PoissonLearning

    X, y = make_gaussian_mixture(n, d, 10, sep=0.5, random_state=0)
    log(f"scale: n={n} d={d}; graphlearning graph ...")
    W, gl_graph_s, _ = shared_graph(gl, X)
    log(f"scale: gl.weightmatrix.knn {gl_graph_s:.1f} s, components {n_components(W)}")
    y_train = hide_labels(y, per_class, random_state=0)
    lab = np.flatnonzero(y_train >= 0)

    def ours(rtol):
        def fit():
            model = PoissonLearning(graph=W, n_neighbors=K, rtol=rtol).fit(X, y_train)
            U = model.scores_ / model.class_priors_  # the raw u (priors equal here)
            info = model.solver_info_
            return model.transduction_, U, {"method": info.solver,
                                            "iterations": np.asarray(info.iterations).tolist()}
        return fit

    def theirs():
        model = gl.ssl.poisson(W)
        U = model.fit(lab, y_train[lab])
        return model.predict(), U, {"tol": model.tol}

    methods = {"PoissonLearning (rtol 1e-6, default)": ours(1e-6),
               "PoissonLearning(rtol=1e-3)": ours(1e-3),
               "gl poisson (abs. tol 1e-3)": theirs}
    rows = {m: {"time": [], "acc": None, "relres": None, "info": None} for m in methods}
    for _ in range(repeats):  # interleaved, so that a burst of load hits all methods alike
        for key, fit in methods.items():
            gc.collect()
            t0 = time.perf_counter()
            pred, U, info = fit()
            rows[key]["time"].append(time.perf_counter() - t0)
            rows[key]["acc"] = accuracy(np.asarray(pred), y, y_train)
            rows[key]["relres"] = relative_residuals(W, np.asarray(U), y_train)
            rows[key]["info"] = info
            log(f"scale {key}: {rows[key]['time'][-1]:.2f} s acc {rows[key]['acc']:.4f} "
                f"relres {rows[key]['relres']:.1e}")
    return {"n": n, "d": d, "labels_per_class": per_class, "gl_graph_seconds": gl_graph_s,
            "W_nnz": int(W.nnz), "methods": rows}


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------


def encode(y):
    return np.unique(y, return_inverse=True)[1].astype(np.int64)


def per_class_draws(y, rates, n_draws):
    from fastgssl.datasets import hide_labels

    return [(str(r), [hide_labels(y, r, random_state=s) for s in range(n_draws)]) for r in rates]


def random_draws(y, n_labels, n_draws):
    out = []
    for s in range(n_draws):
        rng = np.random.default_rng(s)
        y_train = np.full(y.shape, -1, dtype=np.int64)
        lab = rng.choice(y.size, n_labels, replace=False)
        y_train[lab] = y[lab]
        out.append(y_train)
    return [(f"{n_labels} labels", out)]


def load_case(name):
    from fastgssl.datasets import load_libsvm, load_mnist_test

    if name == "mnist":
        X, y = load_mnist_test()
        return "MNIST test images", X, encode(y)
    if name == "letter":
        X, y = load_libsvm("letter.scale", dense=True)
        try:
            Xt, yt = load_libsvm("letter.scale.t", dense=True)
            X, y = np.vstack([X, Xt]), np.concatenate([y, yt])
        except FileNotFoundError:
            pass
        return "letter", X, encode(y)
    raise ValueError(name)


def warm_up():
    """Compile fastgssl's kernels (graph search, solvers, MBO) outside every timing."""
    from fastgssl.datasets import hide_labels, make_gaussian_mixture

    X, y = make_gaussian_mixture(3_000, 20, 5, sep=1.0, random_state=0)
    y_train = hide_labels(y, 2, random_state=0)
    pri = np.full(5, 0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        W = None
        for make in OURS.values():
            model = make("knn", pri).fit(X, y_train)
            W = model.graph_
        for make in OURS.values():
            make(W, pri).fit(X, y_train)


def meta(args):
    import fastgssl

    root = Path(fastgssl.__file__).resolve().parents[1]

    def git(*cmd):
        try:
            return subprocess.run(["git", "-C", str(root), *cmd], capture_output=True,
                                  text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    versions = {}
    for dist in ("fastgssl", "graphlearning", "annoy", "scikit-learn", "numpy", "scipy",
                 "numba"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "package_tree_dirty": bool(git("status", "--porcelain", "--", "fastgssl")),
        "versions": versions,
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "env": {v: os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
                                               "OMP_NUM_THREADS", "FASTGSSL_NUM_THREADS")},
        "load_start": os.getloadavg(),
        "args": vars(args),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 draws, 1 and 10 labels per class, scale row at n = 20,000")
    parser.add_argument("--draws", type=int, default=None, help="label draws per cell (10)")
    parser.add_argument("--rates", type=int, nargs="+", default=None,
                        help="labels per class (1 2 5 10)")
    parser.add_argument("--timed-draws", type=int, default=3,
                        help="draws per cell whose own-graph fits run end to end (3)")
    parser.add_argument("--cases", nargs="+",
                        default=["mnist", "letter", "classification", "goal", "scale"],
                        choices=["mnist", "letter", "classification", "goal", "scale"])
    parser.add_argument("--letter-draws", type=int, default=None,
                        help="label draws per letter cell (3; its fits cost 5-20x MNIST's)")
    parser.add_argument("--letter-gl-poisson-draws", type=int, default=0,
                        help="draws per letter cell of gl.ssl.poisson (0: its CG does not "
                             "converge on letter's disconnected graph, 50-700 s per fit)")
    parser.add_argument("--letter-gl-mbo-draws", type=int, default=0,
                        help="draws per letter cell of gl.ssl.poisson_mbo (0: with 26 classes "
                             "each volume projection takes ~45 s, 21 per fit)")
    parser.add_argument("--scale-n", type=int, default=None, help="scale row size (100,000)")
    parser.add_argument("--scale-repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="save the raw numbers here")
    args = parser.parse_args()
    n_draws = args.draws or (3 if args.quick else 10)
    rates = args.rates or ([1, 10] if args.quick else list(RATES))
    timed = min(args.timed_draws, 1 if args.quick else args.timed_draws)
    scale_n = args.scale_n or (20_000 if args.quick else 100_000)

    try:
        import graphlearning as gl
    except ImportError:
        print("graphlearning is not installed: pip install -e '.[bench]' (graphlearning, annoy)",
              file=sys.stderr)
        return 2

    results = {"meta": meta(args), "cases": {}}
    log(f"fastgssl {results['meta']['commit']} (package tree dirty: "
        f"{results['meta']['package_tree_dirty']}); warming the JIT")
    warm_up()
    from sklearn.datasets import make_classification

    for key in args.cases:
        if key == "scale":
            continue
        if key in ("mnist", "letter"):
            try:
                title, X, y = load_case(key)
            except (FileNotFoundError, OSError) as exc:
                log(f"skipping {key}: {exc}")
                continue
            draws = per_class_draws(y, rates, n_draws)
        elif key == "classification":
            X, y = make_classification(n_samples=20_000, n_features=30, random_state=0)
            title = "make_classification(20000, 30), 1 % labeled"
            draws = random_draws(y, 150, n_draws)
        else:
            X, y = make_classification(n_samples=8_000, n_features=30, random_state=0)
            title = "make_classification(8000, 30), goal case"
            draws = random_draws(y, 80, n_draws)
        case_draws, max_draws = n_draws, None
        if key == "letter":
            case_draws = min(n_draws, args.letter_draws or 3)
            draws = [(c, ys[:case_draws]) for c, ys in draws]
            max_draws = {"gl poisson": args.letter_gl_poisson_draws,
                         "gl poisson_mbo(priors)": args.letter_gl_mbo_draws,
                         "gl laplace(poisson)": args.letter_gl_poisson_draws,
                         "gl volume_mbo(priors)": args.letter_gl_mbo_draws}
        case = run_case(title, np.asarray(X, dtype=np.float64), y, draws, gl, timed,
                        max_draws)
        case.update(title=title, n_draws=case_draws)
        results["cases"][key] = case
        save(results, args.json)  # after every case: a late failure keeps the earlier ones
    if "scale" in args.cases:
        results["scale"] = run_scale(gl, scale_n, 50, 10, args.scale_repeats)
    results["meta"]["load_end"] = os.getloadavg()
    results["meta"]["package_tree_dirty_end"] = meta(args)["package_tree_dirty"]
    save(results, args.json)
    report(results)
    if args.json is not None:
        log(f"raw numbers in {args.json}")
    return 0


def save(results, path):
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=1, default=_jsonable))


def _jsonable(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


if __name__ == "__main__":
    sys.exit(main())
