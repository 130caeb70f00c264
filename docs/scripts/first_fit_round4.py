"""The measurements behind the fourth round of issue 54's first-fit work: the sources'
locality order (``fastgssl/solvers/_laplacian_matrix.py: _sources_order``). Every
comparison is interleaved in one process (the machine's speed moves within minutes) and
reports medians and minima.

Usage (outputs committed beside this file as ``first_fit_round4_<part>.txt``)::

    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round4.py order
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round4.py solve
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round4.py mbo-accuracy

Graphs (built once, then cached in ``$TMPDIR/fastgssl_bench_single_fit``, about two minutes
each): graphlearning's annoy 10-NN graph of ``bench/bench_single_fit.py``'s 10^6-point mixture
(sep 0.5; its cache file when that benchmark made it), and ``IVFGraph``'s 10-NN graph of
``bench/bench_million.py``'s (sep 1.0, float32, recall 0.92). Right-hand sides: Poisson
learning's sources for 5 and 10 labels per class (``hide_labels(y, k, random_state=0)``).

Parts:

``order``
    The block product (10 columns, ``spmm_dot``) with the Poisson Laplacian in the input
    order, the aggregates' order (the coarse space's, as the solver built it before) and the
    sources' order; and two variants of the sources' order that were not kept: the class
    groups with the aggregates inside, and with the multi-source search's discovery rank
    inside.
``solve``
    ``LaplacianSolver(L).solve(B)``, setup included, with the sources' order at the first
    solve against the aggregates' order (``_sources_order`` made to return None).
``mbo-accuracy``
    ``PoissonMBO(class_priors=p)`` beside graphlearning's ``poisson_mbo(class_priors=p)``
    on ``bench_single_fit.py``'s 5,000 MNIST images and graph, 20 label draws of 5 per
    class: the accuracy of each draw, their means and medians (the benchmark's median of 3
    draws showed 0.859 against 0.869).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
CACHE = os.path.join(tempfile.gettempdir(), "fastgssl_bench_single_fit")


def header(part):
    from fastgssl._threads import thread_settings

    print(f"# first_fit_round4 {part}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"threads {thread_settings()}", flush=True)


def graphs():
    """(name, W, y, labels per class) of the two 10^6-point graphs, built once and cached."""
    from fastgssl.datasets import make_gaussian_mixture

    os.makedirs(CACHE, exist_ok=True)
    out = []
    path = os.path.join(CACHE, "single_fit_W_1000000.npz")
    X, y = make_gaussian_mixture(10**6, 50, 10, 0.5, random_state=0)
    if not os.path.exists(path):
        import graphlearning as gl
        from bench_low_label import shared_graph

        sp.save_npz(path, shared_graph(gl, X)[0])
    out.append(("graphlearning annoy 10-NN, sep 0.5", sp.load_npz(path).tocsr(),
                np.asarray(y), 5))
    path = os.path.join(CACHE, "ivf1m_sep1.npz")
    X, y = make_gaussian_mixture(10**6, 50, 10, 1.0, random_state=0)
    if not os.path.exists(path):
        from fastgssl.graphs import IVFGraph

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            W = IVFGraph(n_neighbors=10, target_recall=0.92, random_state=0,
                         recall_sample=0)(X.astype(np.float32))
        sp.save_npz(path, sp.csr_matrix(W))
    out.append(("IVFGraph 10-NN, sep 1.0", sp.load_npz(path).tocsr(), np.asarray(y), 10))
    return out


def poisson_system(W, y, per_class):
    from fastgssl._components import labeled_components
    from fastgssl.datasets import hide_labels
    from fastgssl.models._poisson import poisson_sources
    from fastgssl.models._propagation_systems import _laplacian

    y_train = hide_labels(y, per_class, random_state=0)
    lab = np.flatnonzero(y_train >= 0)
    comp, _ = labeled_components(W, lab)
    B, _ = poisson_sources(comp, lab, np.eye(10)[y_train[lab]], y.size)
    return sp.csr_matrix(_laplacian(W)), B


def order(reps=12):
    from fastgssl import _sparse_blocks as K
    from fastgssl.solvers._coarse_space import AggregationCoarseSpace
    from fastgssl.solvers._laplacian_matrix import _permuted, _sources_bfs, _sources_order

    header("order")
    for name, W, y, per_class in graphs():
        L, B = poisson_system(W, y, per_class)
        n = L.shape[0]
        space = AggregationCoarseSpace(L, strict=True)
        seeds = np.flatnonzero(np.any(B != 0, axis=1))
        owner, rank = _sources_bfs(L.indptr, L.indices, seeds.astype(np.int64), n)
        group = np.argmax(np.abs(B[seeds]), axis=1)[owner]
        keys = [space._maps[0]]
        for agg in space._maps[1:]:
            keys.append(agg[keys[-1]])
        t0 = time.perf_counter()
        sources = _sources_order(L, B)
        t_sources = time.perf_counter() - t0
        orders = {"aggregates": space.locality_order(), "sources": sources,
                  "sources, aggregates inside": np.lexsort(keys + [group]),
                  "sources, rank inside": np.lexsort([rank, group])}
        mats = {"input": L}
        for key, o in orders.items():
            o = np.asarray(o, dtype=np.int64)
            inverse = np.empty(n, dtype=np.int64)
            inverse[o] = np.arange(n)
            mats[key] = _permuted(L, o, inverse)
        P = np.ascontiguousarray(np.random.default_rng(0).standard_normal((n, 10)))
        AP = np.empty_like(P)
        times = {key: [] for key in mats}
        for _ in range(reps):
            for key, M in mats.items():
                t0 = time.perf_counter()
                K.spmm_dot(M.indptr, M.indices, M.data, P, AP)
                times[key].append(time.perf_counter() - t0)
        print(f"\n{name}: n {n}, nnz {L.nnz}, {seeds.size} sources, coarse space "
              f"{space.sizes_}; the sources' order took {t_sources:.2f} s")
        print(f"block product, 10 columns, ms over {reps} interleaved rounds:")
        for key, v in times.items():
            print(f"  {key:28s} median {1e3 * np.median(v):6.1f}  min {1e3 * np.min(v):6.1f}")


def solve(reps=4):
    import fastgssl.solvers._laplacian_matrix as lm
    from fastgssl.solvers import LaplacianSolver

    header("solve")
    kept = lm._sources_order
    for name, W, y, per_class in graphs():
        L, B = poisson_system(W, y, per_class)
        times = {"sources": [], "aggregates": []}
        for _ in range(reps):
            for key in times:
                lm._sources_order = kept if key == "sources" else (lambda Q, B: None)
                try:
                    t0 = time.perf_counter()
                    _, info = LaplacianSolver(L, rtol=1e-6, check_input=False).solve(B)
                    times[key].append(time.perf_counter() - t0)
                finally:
                    lm._sources_order = kept
        print(f"\n{name}: setup + first solve, rtol 1e-6, {info.iterations.max()} "
              f"iterations, wall s over {reps} interleaved rounds:")
        for key, v in times.items():
            print(f"  {key:12s} median {np.median(v):6.2f}  min {np.min(v):6.2f}  "
                  f"all {' '.join(f'{t:.2f}' for t in v)}")


def mbo_accuracy(draws=20):
    import graphlearning as gl
    from bench_single_fit import data, graph

    from fastgssl.datasets import hide_labels
    from fastgssl.models import PoissonMBO

    header("mbo-accuracy")
    X, y, what = data(5000)
    W, _ = graph(gl, X, "5000", CACHE)
    priors = np.bincount(y) / y.size
    ours, theirs = [], []
    for seed in range(draws):
        y_train = hide_labels(y, 5, random_state=seed)
        unl = y_train < 0
        lab = np.flatnonzero(~unl)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pred = gl.ssl.poisson_mbo(W, class_priors=priors).fit_predict(lab, y_train[lab])
            theirs.append(float((pred[unl] == y[unl]).mean()))
            pred = PoissonMBO(graph=W, class_priors=priors).fit(X, y_train).transduction_
            ours.append(float((pred[unl] == y[unl]).mean()))
    ours, theirs = np.array(ours), np.array(theirs)
    diff = ours - theirs
    print(f"\n{what}, graphlearning's 10-NN graph, 5 labels per class, {draws} draws")
    print("fastgssl      " + " ".join(f"{a:.4f}" for a in ours))
    print("graphlearning " + " ".join(f"{a:.4f}" for a in theirs))
    print(f"means {ours.mean():.4f} and {theirs.mean():.4f} (difference {diff.mean():+.4f}, "
          f"sd {diff.std(ddof=1):.4f}); medians {np.median(ours):.4f} and "
          f"{np.median(theirs):.4f}; fastgssl higher in {(diff > 0).sum()}, lower in "
          f"{(diff < 0).sum()} of {draws}")


PARTS = {"order": order, "solve": solve, "mbo-accuracy": mbo_accuracy}

if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else ""
    if part not in PARTS:
        sys.exit(f"usage: python {sys.argv[0]} {{{','.join(PARTS)}}}")
    PARTS[part]()
