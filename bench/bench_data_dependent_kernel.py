"""Benchmark: the data-dependent kernel of seed 002 (DataDependentKernel, KernelKMeans).

Three parts, each printing medians and ratios measured in the same run:

1. Build time vs n (Gaussian mixture, d = 50, 10 classes, kNN k = 5 with 0-1 weights,
   Q = L + 1e-6 I, p = 1, eta = 1, m_hat = 500: the setting of the paper's timing figure and
   of shared/baselines/c_pyamg_laplacian.py). Stages: graph, the m_hat Laplacian solves, A
   and the factor. The slope of log(time) against log(n) is reported (1 = linear).
   Baselines in the same run: the dense construction of Sindhwani et al.
   (I + eta Q K)^{-1} at small n (cubic; extrapolated to larger n with the cubic law),
   and, at the largest n, the solves done the way a scipy user would: one Jacobi-PCG
   (scipy.sparse.linalg.cg) per subsample point, timed on 20 columns and scaled to m_hat.
2. Accuracy on the shared MNIST test images (4 vs 9, 3 vs 8, odd vs even) with few labels:
   SVC with K_breve (kernel=ddk.gram) against the plain RBF SVC with the same bandwidth and
   against a "budget" LapSVM trained on the subsample only (graph on the subsample), the
   paper's comparison. 30 % of the images are held out (not in the graph): the kernel is
   evaluated at new points.
3. Two-moons kernel k-means (seed 002, Section 5.2): 1,000 points, m_hat = 40, p = 2.

4. (``--given-graph``, alone) issue 25: fit time with the kNN graph passed in, 16,000 /
   32,000 / 64,000 points, interleaved medians and ratios (``--profile``: cProfile).

Usage:  python bench/bench_data_dependent_kernel.py            (full: n up to 2 x 10^5)
        python bench/bench_data_dependent_kernel.py --given-graph [--profile]
                [--baseline OLD_MODULE.py]   (another _data_dependent.py, interleaved)
        python bench/bench_data_dependent_kernel.py --quick    (n up to 2 x 10^4, 1 trial)
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import warnings

import numpy as np
from timing import load_note, median_time

from fastgssl.datasets import make_gaussian_mixture

QUICK = "--quick" in sys.argv
D, N_CLASSES, SEP, K_NN = 50, 10, 0.5, 5
M_HAT = 200 if QUICK else 500
SIZES = [5_000, 10_000, 20_000] if QUICK else [10_000, 20_000, 40_000, 64_000, 100_000, 200_000]
DENSE_SIZES = [500, 1_000] if QUICK else [1_000, 2_000, 3_000]
REPEATS = 1 if QUICK else 3
LABELS = [10, 40] if QUICK else [10, 20, 50, 100]
TRIALS = 2 if QUICK else 3


def gaussian_mixture(n, d, n_classes, sep, seed=0):
    """The peers' synthetic workload: isotropic unit Gaussians around N(0, sep^2 I) means."""
    return make_gaussian_mixture(n, d, n_classes, sep, random_state=seed)


# ----------------------------------------------------------------------------------------
def staged_build(X, m_hat, seed=0):
    """DataDependentKernel.fit, with its stages timed separately (same code path)."""
    from fastgssl import registry
    from fastgssl.kernels import _data_dependent as dd
    from fastgssl.kernels import rbf_kernel

    n = X.shape[0]
    t = {}
    t0 = time.perf_counter()
    W = registry.get("fastgssl.graphs", "knn", n_neighbors=K_NN, weight="binary")(X)
    t["graph"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    R = registry.get("fastgssl.regularizers", "L", power=1, ridge=1e-6)(W)
    U = dd._null_space_basis(W, R, 1e-6)
    solver = dd._make_laplacian_solver(R, U, 1e-6, "auto", 1e-8)
    S = np.sort(np.random.default_rng(seed).choice(n, m_hat, replace=False))
    Z, infos = dd._green_columns(solver, U, S, n, 1)
    t["solves"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    A = dd._energy_gram(R, Z, 1)
    C = U[S].toarray()
    dd._factor(A, rbf_kernel(X[S], sigma=float(D)), C[:, np.abs(C).sum(0) > 0], 1.0, 1e-6, 1)
    t["A+factor"] = time.perf_counter() - t0
    t["total"] = sum(t.values())
    its = int(max(i.iterations.max() for i in infos))
    return t, its, infos[0].solver, W, R, S


def part_scaling():
    from fastgssl.kernels import DataDependentKernel, rbf_kernel

    print(f"\n== 1. build time vs n (d={D}, k={K_NN}, Q = L + 1e-6 I, p=1, m_hat={M_HAT}) "
          f"{load_note()}")
    # warm-up: Numba kernels of the graph and the solver compile once per process
    DataDependentKernel(n_subsample=50, regularizer="L", sigma=float(D)).fit(
        gaussian_mixture(3000, D, N_CLASSES, SEP)[0])
    rows = []
    for n in SIZES:
        X, _ = gaussian_mixture(n, D, N_CLASSES, SEP, seed=0)
        reps = REPEATS if n <= 20_000 else 1
        runs = [staged_build(X, M_HAT) for _ in range(reps)]
        med = {k: statistics.median(r[0][k] for r in runs) for k in runs[0][0]}
        its, method = runs[0][1], runs[0][2]
        rows.append((n, med))
        print(f"n={n:>7}: total {med['total']:7.2f} s  (graph {med['graph']:6.2f}, solves "
              f"{med['solves']:6.2f} [{method}, {its} it], A+factor {med['A+factor']:5.2f}) "
              f"median of {reps} {load_note()}", flush=True)
    ns = np.array([r[0] for r in rows], dtype=float)
    for stage in ("total", "solves", "graph"):
        ts = np.array([r[1][stage] for r in rows])
        slope = np.polyfit(np.log(ns), np.log(ts), 1)[0]
        print(f"slope of log({stage} time) vs log(n): {slope:.2f}")
    t64 = dict(rows).get(64_000)
    if t64 is not None:
        print(f"n=64,000: {t64['total']:.1f} s (goal < 30 s; the paper: ~3 min in MATLAB)")

    # baseline 1: the dense O(n^3) construction (Sindhwani et al.), same graph and Q
    print("\n-- baseline: dense construction K - eta K (I + eta Q K)^{-1} Q K")
    dense = []
    for n in DENSE_SIZES:
        X, _ = gaussian_mixture(n, D, N_CLASSES, SEP, seed=0)

        def build_dense(X=X, n=n):
            from fastgssl import registry

            W = registry.get("fastgssl.graphs", "knn", n_neighbors=K_NN)(X)
            Q = registry.get("fastgssl.regularizers", "L", ridge=1e-6)(W).toarray()
            K = rbf_kernel(X, sigma=float(D))
            return np.linalg.solve(np.eye(n) + Q @ K, Q @ K)

        med, _, _ = median_time(build_dense, REPEATS)
        ours = median_time(lambda X=X, n=n: DataDependentKernel(
            n_subsample=min(M_HAT, n // 2), regularizer="L", sigma=float(D)).fit(X), REPEATS)[0]
        dense.append((n, med))
        print(f"n={n:>6}: dense {med:7.2f} s, DataDependentKernel(m_hat={min(M_HAT, n // 2)}) "
              f"{ours:6.2f} s, ratio dense/ours {med / ours:6.1f}x")
    n0, t0 = dense[-1]
    for n, med in rows:
        est = t0 * (n / n0) ** 3
        print(f"n={n:>7}: dense extrapolated (n^3) {est:12.0f} s vs ours {med['total']:.2f} s "
              f"-> {est / med['total']:.0f}x")

    # baseline 2: the m_hat solves as a scipy user writes them, at the largest size
    n = SIZES[-1] if QUICK else 64_000
    X, _ = gaussian_mixture(n, D, N_CLASSES, SEP, seed=0)
    t, its, method, W, R, S = staged_build(X, M_HAT)
    import scipy.sparse.linalg as spla

    dinv = 1.0 / R.diagonal()
    M = spla.LinearOperator(R.shape, matvec=lambda v: dinv * v.ravel(), dtype=float)
    t0 = time.perf_counter()
    n_cols = 20
    for j in range(n_cols):
        b = np.zeros(n)
        b[S[j]] = 1.0
        spla.cg(R, b, rtol=1e-8, M=M, maxiter=100_000)
    per = (time.perf_counter() - t0) / n_cols
    print(f"\n-- baseline: {M_HAT} solves one at a time, scipy cg + Jacobi, n={n}: "
          f"{per * M_HAT:.1f} s (20 timed, scaled) vs the batched solves here "
          f"{t['solves']:.1f} s [{method}] -> ratio ours/scipy {t['solves'] / (per * M_HAT):.2f}")


# ----------------------------------------------------------------------------------------
def mnist_task(X, y, positive, seed=0):
    mask = np.ones(len(y), bool) if positive == "odd" else np.isin(y, positive[0] + positive[1])
    Xt, yt = X[mask], y[mask]
    yb = (yt % 2 == 1).astype(int) if positive == "odd" else np.isin(yt, positive[1]).astype(int)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(yb))
    n_test = int(0.3 * len(yb))
    return Xt[perm[n_test:]], yb[perm[n_test:]], Xt[perm[:n_test]], yb[perm[:n_test]]


def part_mnist():
    from sklearn.svm import SVC

    from fastgssl.datasets import load_mnist_test
    from fastgssl.kernels import DataDependentKernel, default_sigma, rbf_kernel

    try:
        X, y = load_mnist_test()
    except (FileNotFoundError, OSError) as exc:
        print(f"\n== 2. MNIST skipped: {exc}")
        return
    try:
        from fastgssl.models import LapSVM
    except ImportError:
        LapSVM = None
    print(f"\n== 2. MNIST test images, SVC accuracy on held-out 30 % ({TRIALS} trials) "
          f"{load_note()}")
    print(f"   kernel: L_norm^{MNIST_POWER} + 1e-6 I, eta {MNIST_ETA:g}, kNN k=5 binary, "
          f"sigma = median heuristic, C = {C_SVM:g}")
    tasks = {"4 vs 9": ([4], [9]), "3 vs 8": ([3], [8]), "odd vs even": "odd"}
    for name, spec in tasks.items():
        Xtr, ytr, Xte, yte = mnist_task(X, y, spec)
        sigma = default_sigma(Xtr)
        m_hat = 250 if name != "odd vs even" else 500
        t0 = time.perf_counter()
        fit_times = []
        acc = {(n_lab, k): [] for n_lab in LABELS for k in ("rbf", "ddk", "budget LapSVM")}
        for trial in range(TRIALS):
            # nested label sets: the first l of a random order per class; the kernel is
            # built once per trial, its subsample biased to the largest label set
            r = np.random.default_rng(100 + trial)
            order = [r.permutation(np.flatnonzero(ytr == c)) for c in (0, 1)]
            pool = np.r_[order[0][: max(LABELS) // 2], order[1][: max(LABELS) // 2]]
            y_pool = np.full(len(ytr), -1)
            y_pool[pool] = ytr[pool]
            t1 = time.perf_counter()
            ddk = DataDependentKernel(eta=MNIST_ETA, n_subsample=m_hat, regularizer="L_norm",
                                      power=MNIST_POWER, sigma=sigma, random_state=trial)
            ddk.fit(Xtr, y_pool)
            fit_times.append(time.perf_counter() - t1)
            S = ddk.subsample_indices_
            for n_lab in LABELS:
                lab = np.r_[order[0][: n_lab // 2], order[1][: n_lab - n_lab // 2]]
                svc = SVC(kernel="precomputed", C=C_SVM)
                svc.fit(rbf_kernel(Xtr[lab], sigma=sigma), ytr[lab])
                acc[n_lab, "rbf"].append(np.mean(
                    svc.predict(rbf_kernel(Xte, Xtr[lab], sigma=sigma)) == yte))
                svc = SVC(kernel=ddk.gram, C=C_SVM).fit(Xtr[lab], ytr[lab])
                acc[n_lab, "ddk"].append(np.mean(svc.predict(Xte) == yte))
                if LapSVM is not None:
                    # the paper's "budget" LapSVM: the graph on the subsample only (plus the
                    # labeled points). Same objective as SVC(C) with K_breve in LapSVM's
                    # mean form: gamma_a = 1 / (2 C l), gamma_i / m^2 = eta / (2 C l).
                    idx = np.union1d(S, lab)
                    y_idx = np.full(idx.size, -1)
                    is_lab = np.isin(idx, lab)
                    y_idx[is_lab] = ytr[idx[is_lab]]
                    gamma_a = 1.0 / (2 * C_SVM * n_lab)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        lap = LapSVM(sigma=sigma, gamma_a=gamma_a,
                                     gamma_i=MNIST_ETA * idx.size ** 2 * gamma_a,
                                     n_neighbors=K_NN, graph_weight="binary",
                                     regularizer="L_norm", power=MNIST_POWER)
                        lap.fit(Xtr[idx], y_idx)
                    acc[n_lab, "budget LapSVM"].append(np.mean(lap.predict(Xte) == yte))
        for n_lab in LABELS:
            line = ", ".join(f"{k} {np.mean(acc[n_lab, k]):.3f}"
                             for k in ("rbf", "ddk", "budget LapSVM") if acc[n_lab, k])
            print(f"{name:>11} n={len(ytr)} m_hat={m_hat} labels={n_lab:>3}: {line}", flush=True)
        print(f"{name:>11}: kernel fit median {statistics.median(fit_times):.2f} s; "
              f"task total {time.perf_counter() - t0:.1f} s", flush=True)


MNIST_ETA, MNIST_POWER = 100.0, 4  # set on a 4 vs 9 pilot run (see the report)
C_SVM = 10.0


# ----------------------------------------------------------------------------------------
def part_moons():
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_moons

    from fastgssl.kernels import DataDependentKernel
    from fastgssl.models import KernelKMeans

    X, y = make_moons(1000, noise=0.05, random_state=0)

    def err(labels):
        e = float(np.mean(labels != y))
        return min(e, 1 - e)

    print(f"\n== 3. two moons (1,000 points, noise 0.05), kernel k-means {load_note()}")
    errs, times = [], []
    for seed in range(5):
        t0 = time.perf_counter()
        ddk = DataDependentKernel(eta=1e4, n_subsample=40, regularizer="L", power=2,
                                  sigma=0.1, random_state=seed).fit(X)
        km = KernelKMeans(2, kernel=ddk, random_state=0).fit(X)
        times.append(time.perf_counter() - t0)
        errs.append(err(km.labels_))
    rbf = {s: err(KernelKMeans(2, kernel="rbf", sigma=s, random_state=0).fit(X).labels_)
           for s in (0.02, 0.05, 0.1, 0.2, 0.5)}
    print(f"data-dependent kernel (m_hat=40, p=2, L, eta=1e4, sigma=0.1), 5 subsamples: "
          f"errors {np.round(errs, 3).tolist()} (median {np.median(errs):.3f}; paper 1 %), "
          f"median time {np.median(times):.2f} s")
    print(f"RBF kernel k-means errors by sigma: "
          f"{ {k: round(v, 3) for k, v in rbf.items()} }")
    euclid = err(KMeans(2, n_init=10, random_state=0).fit(X).labels_)
    print(f"Euclidean k-means error: {euclid:.3f} (paper 11.4 %)")


def part_given_graph(sizes=(16_000, 32_000, 64_000), repeats=2):
    """Issue 25 item 4: DataDependentKernel.fit with the kNN graph passed in (graph=W).

    The graph's own cost is measured by bench_knn_gemm.py; here only what the kernel adds
    (regularizer, m solves, energy Gram, factor), defaults (L_norm, m = 250, p = 1) with a
    fixed sigma, interleaved over the sizes, medians; CPU seconds too (less sensitive to
    the other jobs on a shared machine).  Goal: 64,000 points at most 5x 16,000.
    """
    import cProfile
    import pstats

    from fastgssl.graphs import knn_graph
    from fastgssl.kernels import DataDependentKernel

    print(f"\n== 4. given graph (issue 25): d={D}, k={K_NN}, defaults, sigma={D} "
          f"{load_note()}")
    DataDependentKernel(n_subsample=50, sigma=float(D)).fit(
        gaussian_mixture(3000, D, N_CLASSES, SEP)[0])
    classes = {"now": DataDependentKernel}
    if "--baseline" in sys.argv:
        # another version of the module, e.g. main's:
        # git show 436e005:fastgssl/kernels/_data_dependent.py > /tmp/old_ddk.py
        import importlib.util

        path = sys.argv[sys.argv.index("--baseline") + 1]
        spec = importlib.util.spec_from_file_location("baseline_ddk", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        classes = {"baseline": module.DataDependentKernel, "now": DataDependentKernel}
        module.DataDependentKernel(n_subsample=50, sigma=float(D)).fit(
            gaussian_mixture(3000, D, N_CLASSES, SEP)[0])
    data = {}
    for n in sizes:
        X = gaussian_mixture(n, D, N_CLASSES, SEP, seed=0)[0]
        data[n] = (X, knn_graph(X, K_NN))
    wall = {(v, n): [] for v in classes for n in sizes}
    cpu = {(v, n): [] for v in classes for n in sizes}
    for _ in range(repeats):
        for n in sizes:
            X, W = data[n]
            for v, cls in classes.items():
                t0, c0 = time.perf_counter(), time.process_time()
                cls(graph=W, sigma=float(D), random_state=0).fit(X)
                wall[v, n].append(time.perf_counter() - t0)
                cpu[v, n].append(time.process_time() - c0)
    base = sizes[0]
    for v in classes:
        for n in sizes:
            w, c = statistics.median(wall[v, n]), statistics.median(cpu[v, n])
            w0, c0 = statistics.median(wall[v, base]), statistics.median(cpu[v, base])
            print(f"{v:>8} n={n:>6}: wall {w:7.2f} s (x{w / w0:5.2f})  cpu {c:7.2f} s "
                  f"(x{c / c0:5.2f})  runs {[round(t, 2) for t in wall[v, n]]} {load_note()}")
    if "--profile" in sys.argv:
        for n in (sizes[0], sizes[-1]):
            X, W = data[n]
            prof = cProfile.Profile()
            prof.enable()
            DataDependentKernel(graph=W, sigma=float(D), random_state=0).fit(X)
            prof.disable()
            print(f"-- profile n={n}")
            pstats.Stats(prof).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    import platform

    if "--given-graph" in sys.argv:
        part_given_graph()
        sys.exit(0)

    import numpy  # noqa: F401

    print(f"bench_data_dependent_kernel.py {'--quick' if QUICK else '(full)'}; python "
          f"{platform.python_version()}, numpy {np.__version__}; {os.cpu_count()} cpus "
          f"(shared machine: compare ratios within this run)")
    part_moons()
    part_mnist()
    part_scaling()
