"""Issue 54, ninth round: measurements of its two library changes, each interleaved in one
process (the machine's speed moves within minutes), medians.

Parts (outputs committed beside this file as ``first_fit_round9_<part>.txt``)::

    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round9.py products
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round9.py eager
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round9.py mbo
    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round9.py refused
    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round9.py order
    # the library of a checkout on PYTHONPATH, two checkouts alternately:
    PYTHONPATH=<checkout> OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round9.py solves

``products``
    The block product ``spmm_dot`` (``fastgssl._sparse_blocks``, which now indexes with
    unsigned integers) against scipy's ``L @ X`` on the Laplacian of
    ``bench/bench_single_fit.py``'s cached 5,000- and 2x10^4-point graphs, 1, 2 and 10
    columns, 1 and 2 threads, microseconds (best of 7 medians of 100 calls); the results
    equal scipy's bit for bit. The signed-index kernels they replace were measured by the
    same calls on a copy of the previous module (the commit message of 9a3f787).
``eager``
    First fits on those graphs (5 labels per class, two draws, 9 interleaved rounds) with
    the coarse space built at setup on nonsingular barely dominant matrices (the default
    from the ninth round) against the probe of the eighth round (``_barely_dominant``
    patched to refuse), milliseconds.
``mbo``
    PoissonMBO's first fits (``class_priors`` the true shares) at 5,000 and 2x10^4 points,
    seconds and ``n_changed_`` of three draws; then its accuracy beside graphlearning's
    ``poisson_mbo`` on the same 5,000-point W, draws 0-11.
``refused``
    ``LaplacianSolver`` on ``bench/bench_priced_setup.py``'s ridged 10^5- and 2x10^5-point
    systems (10 point sources, its cached graphs): setup and solve CPU seconds at the
    defaults and with ``coarse_space=None``; the aggregation's first pass and the Galerkin
    product the refusal pays; at 10^5 also the two-level space with ``MAX_COARSE`` raised
    (the too-fine level accepted), ridge and Poisson systems.
``order``
    The 2x10^4-point Poisson system of that bench: the default solve against
    ``coarse_space=None`` (both keep Jacobi), 15 alternations in each order, CPU ms.
``solves``
    The 5,000-point Poisson system (10 columns) and PWLL's weight system (one column) of
    ``bench_single_fit.py``'s MNIST graph, a new ``LaplacianSolver`` each time, medians of
    15 (ms), then first Poisson and PWLL fits on its cached 10^6-point graph (one each, s),
    for the fastgssl on the path: run from two checkouts alternately.

The graphs are those ``bench/bench_single_fit.py`` caches (``--cache``, default the temp
directory's ``fastgssl_bench_single_fit``): run it once first.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))


def cached_graph(cache, n):
    return sp.load_npz(os.path.join(cache, f"single_fit_W_{n}.npz")).tocsr()


def median_us(f, calls=100, rounds=7):
    f()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return float(np.median(times))


def products(cache):
    import numba

    from fastgssl import _sparse_blocks as K
    from fastgssl.regularizers import laplacian

    print("| n | columns | threads | spmm_dot us | scipy L @ X us | equal |")
    print("|---|---|---|---|---|---|")
    for n in (5000, 20000):
        L = sp.csr_matrix(laplacian(cached_graph(cache, n), validate=False))
        L.sort_indices()
        for r in (1, 2, 10):
            X = np.random.default_rng(0).standard_normal((n, r))
            AX = np.empty_like(X)
            for threads in (1, 2):
                numba.set_num_threads(threads)
                ours = median_us(lambda L=L, X=X, AX=AX: K.spmm_dot(L.indptr, L.indices,
                                                                     L.data, X, AX))
                theirs = median_us(lambda L=L, X=X: L @ X)
                print(f"| {n:,} | {r} | {threads} | {ours:.0f} | {theirs:.0f} | "
                      f"{np.array_equal(AX, L @ X)} |", flush=True)


def eager(cache):
    from bench_single_fit import ROWS, data

    import fastgssl.models as models
    import fastgssl.solvers._laplacian_solver as LS
    from fastgssl.datasets import hide_labels
    from fastgssl.solvers import clear_solver_cache

    warnings.simplefilter("ignore")
    at_setup = LS._barely_dominant
    print("| n | learner | draw | coarse space at setup ms | probe ms |")
    print("|---|---|---|---|---|")
    for n, rows in ((5000, ("Laplace", "PWLL", "WNLL", "properly")),
                    (20000, ("Laplace", "PWLL"))):
        X, y = data(n)[:2]
        W = cached_graph(cache, n)
        times = {}
        for _ in range(9):
            for mode in ("setup", "probe"):
                LS._barely_dominant = at_setup if mode == "setup" else (lambda Q, d: False)
                for row in rows:
                    (name, params), _, _ = ROWS[row]
                    for draw in range(2):
                        y_train = hide_labels(y, 5, random_state=draw)
                        clear_solver_cache()
                        t0 = time.perf_counter()
                        getattr(models, name)(graph=W, **params).fit(X, y_train)
                        times.setdefault((row, draw, mode), []).append(
                            time.perf_counter() - t0)
        LS._barely_dominant = at_setup
        for row in rows:
            for draw in range(2):
                # (the first round compiles and loads: left out)
                a, b = (np.median(times[(row, draw, m)][1:]) * 1e3 for m in ("setup", "probe"))
                print(f"| {n:,} | {row} | {draw} | {a:.1f} | {b:.1f} |", flush=True)


def mbo(cache):
    import graphlearning as gl
    from bench_single_fit import data

    from fastgssl.datasets import hide_labels
    from fastgssl.models import PoissonMBO

    warnings.simplefilter("ignore")
    for n in (5000, 20000):
        X, y = data(n)[:2]
        W = cached_graph(cache, n)
        priors = np.bincount(y) / y.size
        for draw in range(3):
            y_train = hide_labels(y, 5, random_state=draw)
            PoissonMBO(graph=W, class_priors=priors).fit(X, y_train)  # (compiles)
            t0 = time.perf_counter()
            model = PoissonMBO(graph=W, class_priors=priors).fit(X, y_train)
            print(f"n = {n:,}, draw {draw}: {time.perf_counter() - t0:.3f} s, "
                  f"n_changed_ {model.n_changed_}", flush=True)
    X, y = data(5000)[:2]
    W = cached_graph(cache, 5000)
    priors = np.bincount(y) / y.size
    ours, theirs = [], []
    for draw in range(12):
        y_train = hide_labels(y, 5, random_state=draw)
        lab, unl = np.flatnonzero(y_train >= 0), y_train < 0
        pred = PoissonMBO(graph=W, class_priors=priors).fit(X, y_train).transduction_
        ours.append(np.mean(pred[unl] == y[unl]))
        pred = gl.ssl.poisson_mbo(W, class_priors=priors).fit_predict(lab, y_train[lab])
        theirs.append(np.mean(pred[unl] == y[unl]))
        print(f"5,000 points, draw {draw}: fastgssl {ours[-1]:.4f}, graphlearning "
              f"{theirs[-1]:.4f}", flush=True)
    print(f"means {np.mean(ours):.4f} / {np.mean(theirs):.4f}, medians "
          f"{np.median(ours):.4f} / {np.median(theirs):.4f}")


def _priced_system(n, kind):
    from bench_priced_setup import graph, system

    W = graph(n, 10, os.path.join(tempfile.gettempdir(), "fastgssl_bench_priced_setup"))
    return system(W, kind, 10)


def _cpu_runs(make, B, repeats):
    """(setup, solve) CPU seconds, medians, and the iterations of the last run."""
    runs = []
    for _ in range(repeats):
        c0 = time.process_time()
        solver = make()
        c1 = time.process_time()
        _, info = solver.solve(B)
        runs.append((c1 - c0, time.process_time() - c1))
    return np.median(np.array(runs), axis=0), int(info.iterations.max()), solver


def refused(cache):
    import fastgssl.solvers._coarse_space as CS
    from fastgssl.solvers import LaplacianSolver

    for n in (100000, 200000):
        Q, B, rtol = _priced_system(n, "ridge")
        LaplacianSolver(Q, rtol=rtol).solve(B[:, :2])  # (compiles)
        for name, kw in (("default", {}), ("coarse_space=None", {"coarse_space": None})):
            (setup, solve), its, _ = _cpu_runs(
                lambda kw=kw, Q=Q, rtol=rtol: LaplacianSolver(Q, rtol=rtol, **kw), B, 3)
            print(f"n = {n:,}, ridge, {name}: setup {setup:.3f} s, solve {solve:.3f} s, "
                  f"{its} iterations", flush=True)
        t0 = time.process_time()
        agg, m = CS._aggregate(Q)
        t1 = time.process_time()
        C = CS._galerkin(Q, agg, m)
        t2 = time.process_time()
        _, m2 = CS._aggregate(C)
        print(f"  first pass {t1 - t0:.3f} s: {m} aggregates (max_coarse "
              f"{min(CS.MAX_COARSE, int(np.sqrt(Q.nnz)))}); Galerkin product {t2 - t1:.3f} s; "
              f"the next pass leaves {m2}", flush=True)
    for kind in ("ridge", "poisson"):
        Q, B, rtol = _priced_system(100000, kind)
        before = CS.MAX_COARSE
        CS.MAX_COARSE = 4000
        try:
            (setup, solve), its, solver = _cpu_runs(
                lambda Q=Q, rtol=rtol: LaplacianSolver(Q, rtol=rtol, coarse_space="two_level"),
                B, 2)
        finally:
            CS.MAX_COARSE = before
        print(f"n = 100,000, {kind}, too-fine level accepted "
              f"({solver.coarse_space_.describe()}): setup {setup:.3f} s, solve {solve:.3f} s,"
              f" {its} iterations", flush=True)


def order(cache):
    from fastgssl.solvers import LaplacianSolver

    Q, B, rtol = _priced_system(20000, "poisson")
    LaplacianSolver(Q, rtol=rtol).solve(B)  # (compiles)
    for first in ("auto", None):
        times = {"auto": [], None: []}
        for _ in range(15):
            for cs in (first, "auto" if first is None else None):
                solver = LaplacianSolver(Q, rtol=rtol, coarse_space=cs)
                c0 = time.process_time()
                solver.solve(B)
                times[cs].append(time.process_time() - c0)
        print(f"{'default' if first else 'coarse_space=None'} first: default "
              f"{np.median(times['auto']) * 1e3:.1f} ms, coarse_space=None "
              f"{np.median(times[None]) * 1e3:.1f} ms", flush=True)


def solves(cache):
    from bench_single_fit import ROWS, data

    import fastgssl
    import fastgssl.models as models
    from fastgssl.datasets import hide_labels
    from fastgssl.models._poisson import poisson_sources
    from fastgssl.models._propagation_systems import _laplacian
    from fastgssl.solvers import LaplacianSolver, clear_solver_cache

    warnings.simplefilter("ignore")
    print(f"fastgssl from {os.path.dirname(fastgssl.__file__)}")
    X, y = data(5000)[:2]
    W = cached_graph(cache, 5000)
    y_train = hide_labels(y, 5, random_state=0)
    lab = np.flatnonzero(y_train >= 0)
    L = _laplacian(W)
    B = poisson_sources(np.zeros(5000, dtype=np.int64), lab, np.eye(10)[y_train[lab]],
                        5000)[0]
    f = np.zeros((5000, 1))
    f[lab] = 1.0
    f -= f.mean()
    for name, rhs in (("Poisson, 10 columns", B), ("PWLL weights, 1 column", f)):
        LaplacianSolver(L, rtol=1e-6, null_space="auto").solve(rhs)  # (compiles)
        runs = []
        for _ in range(15):
            t0 = time.perf_counter()
            LaplacianSolver(L, rtol=1e-6, null_space="auto").solve(rhs)
            runs.append(time.perf_counter() - t0)
        print(f"5,000 points, {name}: {np.median(runs) * 1e3:.1f} ms", flush=True)
    X, y = data(1_000_000)[:2]
    W = cached_graph(cache, 1_000_000)
    y_train = hide_labels(y, 5, random_state=0)
    for row in ("Poisson", "PWLL"):
        (name, params), _, _ = ROWS[row]
        clear_solver_cache()
        t0 = time.perf_counter()
        getattr(models, name)(graph=W, **params).fit(X, y_train)
        print(f"10^6 points, first {row} fit: {time.perf_counter() - t0:.1f} s", flush=True)


PARTS = {"products": products, "eager": eager, "mbo": mbo, "refused": refused,
         "order": order, "solves": solves}

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=list(PARTS))
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "fastgssl_bench_single_fit"))
    args = parser.parse_args()
    print(f"# {args.part}; load {os.getloadavg()[0]:.2f}\n")
    PARTS[args.part](args.cache)


if __name__ == "__main__":
    main()
