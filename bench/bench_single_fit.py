"""The fit a user runs: the first fit of each propagation learner on a new graph (issue 54).

Every fastgssl propagation learner beside its graphlearning counterpart, on the same weight
matrix W (graphlearning's ``gl.weightmatrix.knn(X, 10)``, through ``bench_low_label.
shared_graph``), given to fastgssl as ``graph=W`` and to graphlearning as its ``W``:

======================  ==========================================  =============================
row                     fastgssl                                    graphlearning
======================  ==========================================  =============================
Poisson                 ``PoissonLearning()``                       ``ssl.poisson``
Poisson rtol 1e-3       ``PoissonLearning(rtol=1e-3)`` (about       ``ssl.poisson``
                        graphlearning's residual)
Laplace                 ``LabelPropagation()``                      ``ssl.laplace``
PWLL                    ``LabelPropagation(reweighting="poisson")`` ``ssl.laplace(reweighting=
                                                                    "poisson")``
WNLL                    ``LabelPropagation(reweighting="wnll")``    ``... "wnll"``
properly                ``LabelPropagation(reweighting="properly")  ``... "properly", X=X``
PoissonMBO              ``PoissonMBO(class_priors=p)``              ``ssl.poisson_mbo(
                                                                    class_priors=p)``
VolumeMBO               ``VolumeMBO(class_priors=p)``               ``ssl.volume_mbo(
                                                                    class_priors=p)``
======================  ==========================================  =============================

(``p``: the true class shares, as graphlearning's examples use them.)

**A first fit.** fastgssl keeps solver setups process-wide (``reused_solver``) so that refits
on one graph (a grid search's candidates, exact CV) share them; a user's single fit gets no
such help. Every fastgssl fit here therefore starts with ``clear_solver_cache()``: it is the
first fit on its graph. Before any timing, every learner of both libraries is fitted once on
other graphs (MNIST rows 5,000-7,999, and a mixture of 25,000 points so that the solver's
locality order and coarse space run too), so that nothing compiles or loads from Numba's
disk cache inside a timed fit. The two libraries alternate within each draw (same conditions).

**Data.** n = 5,000: the first 5,000 MNIST test images (the shared folder's t10k set;
``FASTGSSL_DATASETS`` or ``../shared/datasets``); larger n: a 10-class Gaussian mixture in
50 dimensions (``make_gaussian_mixture(n, 50, 10, sep=0.5, random_state=0)``). Labels:
``--per-class`` per class (``hide_labels``, seeds 0..draws-1); accuracy on the unlabeled
points. Graphs are cached in ``--cache`` (an ``.npz`` per n).

**Timing.** Wall and CPU seconds (``time.process_time``: all threads of this process) of
each fit, median over the draws; the ratio is graphlearning's median wall time over
fastgssl's, from the same run. The load average is printed beside every row: the machine
is shared, so compare the ratios of one run, not seconds across runs. Run with
``OPENBLAS_NUM_THREADS=1`` (graphlearning's dense steps otherwise spin BLAS threads).

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_single_fit.py --sizes 5000 20000 100000 \\
        --json bench/results/single_fit.json > bench/results/single_fit.md

``--mbo-max-n`` (default 20,000) leaves the MBO rows out above that size: graphlearning's
``poisson_mbo`` took 169 s at 70,000 points (issue 54), more than this whole run.

10^6 points (graphlearning's annoy graph takes about 70 s to build, then is cached; a draw
costs about 6 minutes for the five linear learners of both libraries)::

    OPENBLAS_NUM_THREADS=1 python bench/bench_single_fit.py --sizes 1000000 --draws 1 \
        --rows Poisson Laplace PWLL WNLL properly --json bench/results/single_fit_1m.json \
        > bench/results/single_fit_1m.md
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_low_label import shared_graph  # noqa: E402
from timing import load_note  # noqa: E402

ROWS = {
    # name: (fastgssl estimator and parameters, graphlearning call, uses priors)
    "Poisson": (("PoissonLearning", {}), lambda gl, W, p, X: gl.ssl.poisson(W), False),
    "Poisson rtol 1e-3": (("PoissonLearning", {"rtol": 1e-3}),
                          lambda gl, W, p, X: gl.ssl.poisson(W), False),
    "Laplace": (("LabelPropagation", {}), lambda gl, W, p, X: gl.ssl.laplace(W), False),
    "PWLL": (("LabelPropagation", {"reweighting": "poisson"}),
             lambda gl, W, p, X: gl.ssl.laplace(W, reweighting="poisson"), False),
    "WNLL": (("LabelPropagation", {"reweighting": "wnll"}),
             lambda gl, W, p, X: gl.ssl.laplace(W, reweighting="wnll"), False),
    "properly": (("LabelPropagation", {"reweighting": "properly"}),
                 lambda gl, W, p, X: gl.ssl.laplace(W, reweighting="properly", X=X), False),
    "PoissonMBO": (("PoissonMBO", {}),
                   lambda gl, W, p, X: gl.ssl.poisson_mbo(W, class_priors=p), True),
    "VolumeMBO": (("VolumeMBO", {"random_state": 0}),
                  lambda gl, W, p, X: gl.ssl.volume_mbo(W, class_priors=p), True),
}
MBO = ("PoissonMBO", "VolumeMBO")


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {msg}",
          file=sys.stderr, flush=True)


def data(n):
    """(X, y encoded 0..k-1, description)."""
    from fastgssl.datasets import load_mnist_test, make_gaussian_mixture

    if n <= 5000:
        X, y = load_mnist_test()
        y = np.unique(y, return_inverse=True)[1]
        return X[:n], y[:n], f"MNIST test images 0..{n - 1}"
    X, y = make_gaussian_mixture(n, 50, 10, 0.5, random_state=0)
    return X, np.asarray(y), "10-class Gaussian mixture, d = 50, sep 0.5"


def graph(gl, X, key, cache):
    path = os.path.join(cache, f"single_fit_W_{key}.npz")
    if os.path.exists(path):
        return sp.load_npz(path).tocsr(), None
    W, seconds, _ = shared_graph(gl, X)
    sp.save_npz(path, W)
    return W, seconds


def fit_ours(row, W, X, y_train, priors):
    import fastgssl.models as models
    from fastgssl.solvers import clear_solver_cache

    (name, params), _, uses_priors = ROWS[row]
    if uses_priors:
        params = {**params, "class_priors": priors}
    clear_solver_cache()  # a first fit: no setup kept from an earlier fit on this graph
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w0, c0 = time.perf_counter(), time.process_time()
        model = getattr(models, name)(graph=W, **params).fit(X, y_train)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return np.asarray(model.transduction_), wall, cpu


def fit_gl(row, gl, W, X, y_train, priors):
    _, make, _ = ROWS[row]
    lab = np.flatnonzero(y_train >= 0)
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w0, c0 = time.perf_counter(), time.process_time()
        pred = make(gl, W, priors, X).fit_predict(lab, y_train[lab])
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return np.asarray(pred), wall, cpu


def warm_up(gl, rows, cache):
    """Every learner of both libraries once on other graphs, one small and one of 25,000
    points (the solver's locality order and coarse space start at 20,000): nothing
    compiles or loads from Numba's disk cache later."""
    from fastgssl.datasets import hide_labels, load_mnist_test, make_gaussian_mixture

    try:
        X, y = load_mnist_test()
        X, y = X[5000:8000], np.unique(y, return_inverse=True)[1][5000:8000]
    except FileNotFoundError:
        X, y = make_gaussian_mixture(3000, 50, 10, 0.5, random_state=1)
    sets = [(X, y, "warmup")]
    Xb, yb = make_gaussian_mixture(25_000, 50, 10, 0.5, random_state=1)
    sets.append((Xb, np.asarray(yb), "warmup_25000"))
    for X, y, key in sets:
        W, _ = graph(gl, X, key, cache)
        y_train = hide_labels(y, 5, random_state=0)
        priors = np.bincount(y) / y.size
        for row in rows:
            if row in MBO and key != "warmup":
                continue  # their kernels do not depend on the solver's path
            fit_ours(row, W, X, y_train, priors)
            fit_gl(row, gl, W, X, y_train, priors)


def run_size(gl, n, rows, args):
    from fastgssl.datasets import hide_labels

    X, y, what = data(n)
    W, seconds = graph(gl, X, str(n), args.cache)
    built = "cached" if seconds is None else f"built in {seconds:.1f} s"
    log(f"n = {n}: {what}; graphlearning W nnz {W.nnz} ({built})")
    priors = np.bincount(y) / y.size
    draws = [hide_labels(y, args.per_class, random_state=s) for s in range(args.draws)]
    out = []
    for row in rows:
        if row in MBO and n > args.mbo_max_n:
            continue
        cell = {"ours": [], "gl": [], "load": []}
        for y_train in draws:
            unl = y_train < 0
            for lib in ("ours", "gl"):
                if lib == "ours":
                    pred, wall, cpu = fit_ours(row, W, X, y_train, priors)
                else:
                    pred, wall, cpu = fit_gl(row, gl, W, X, y_train, priors)
                acc = float(np.mean(pred[unl] == y[unl]))
                cell[lib].append((wall, cpu, acc))
            cell["load"].append(os.getloadavg()[0])
        med = {lib: [statistics.median(v[i] for v in cell[lib]) for i in range(3)]
               for lib in ("ours", "gl")}
        rec = {"n": n, "data": what, "row": row, "draws": args.draws,
               "ours_wall": med["ours"][0], "ours_cpu": med["ours"][1],
               "ours_acc": med["ours"][2], "gl_wall": med["gl"][0], "gl_cpu": med["gl"][1],
               "gl_acc": med["gl"][2], "ratio_wall": med["gl"][0] / med["ours"][0],
               "load": [round(x, 2) for x in cell["load"]], "runs": cell}
        out.append(rec)
        log(f"n = {n} {row}: fastgssl {rec['ours_wall']:.3f} s (cpu {rec['ours_cpu']:.3f}) "
            f"acc {rec['ours_acc']:.4f}; graphlearning {rec['gl_wall']:.3f} s "
            f"(cpu {rec['gl_cpu']:.3f}) acc {rec['gl_acc']:.4f}; ratio "
            f"{rec['ratio_wall']:.2f}")
    return out


def table(records):
    lines = ["| n | learner | fastgssl wall s | cpu s | acc | graphlearning wall s | cpu s | "
             "acc | ratio (gl / fastgssl, wall) | load (per draw) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        lines.append(
            f"| {r['n']:,} | {r['row']} | {r['ours_wall']:.3f} | {r['ours_cpu']:.3f} | "
            f"{r['ours_acc']:.4f} | {r['gl_wall']:.3f} | {r['gl_cpu']:.3f} | "
            f"{r['gl_acc']:.4f} | {r['ratio_wall']:.2f} | "
            f"{', '.join(f'{x:.1f}' for x in r['load'])} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 100000])
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--per-class", type=int, default=5)
    parser.add_argument("--mbo-max-n", type=int, default=20000)
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "fastgssl_bench_single_fit"))
    parser.add_argument("--json")
    args = parser.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    import graphlearning as gl

    from fastgssl._threads import thread_settings

    log("warm-up on another graph")
    warm_up(gl, args.rows, args.cache)
    records = []
    for n in args.sizes:
        records += run_size(gl, n, args.rows, args)
    settings = thread_settings()
    print(f"# First fit on a new graph: fastgssl beside graphlearning on the same W\n\n"
          f"{args.draws} label draws of {args.per_class} per class, medians; "
          f"{load_note()} at the end; threads {settings}.\n")
    print(table(records))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "threads": settings, "records": records}, fh,
                      indent=1)


if __name__ == "__main__":
    main()
