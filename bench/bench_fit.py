"""Fit times of fastgssl's kernel machines against scikit-learn, measured in the same run.

Usage: python bench/bench_fit.py [--quick] [--repeats 3] [--skip-large]

Workloads (BENCHMARKS.md):

1. KRR fit, n = 6,400, d = 20 (``make_regression(noise=10)``, the baseline script's data):
   fastgssl ``KRR(backend="dense")`` against ``sklearn.kernel_ridge.KernelRidge`` with the
   same model (``alpha = n lam``, ``gamma = 1 / (2 sigma)``); goal: ratio <= 1.2. Also the
   nystrom backend (c = 300) and the test R^2 of each.
2. SVM fit, n = 2,000, d = 20 (``make_classification``): Huber-hinge ``SVM`` (dense and
   nystrom) against ``sklearn.svm.SVC`` with ``C = 1 / (2 n lam)``, and their test accuracy.
3. LapSVM nystrom fit, n = 100,000, d = 10, c = 300, 1 % labeled (two Gaussian classes):
   wall time of the whole fit (kNN graph included) and of the fit on a precomputed graph,
   with the peak resident memory of the process that ran it (a fresh subprocess, so the
   figure is that fit's). Goal: < 60 s and < 4 GiB.

Medians of ``--repeats`` runs; compare ratios, the machine is shared (2 cores, other jobs).
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
from timing import fmt, median_time

LARGE_CHILD = r"""
import json, resource, sys, time
import numpy as np
from fastgssl.models import LapSVM
n, d, c, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), 0
rng = np.random.default_rng(seed)
means = rng.normal(scale=1.0, size=(2, d))
y = rng.integers(0, 2, n)
X = means[y] + rng.normal(size=(n, d))
ys = np.where(rng.random(n) < 0.01, y, -1)
# warm the JIT (graph search, losses) on a small problem first
LapSVM(backend="nystrom", n_components=20, n_neighbors=5).fit(X[:500], ys[:500])
est = LapSVM(sigma=float(d), gamma_a=1e-4, gamma_i=1.0, n_neighbors=10, backend="nystrom",
             n_components=c, random_state=0)
t0 = time.perf_counter()
est.fit(X, ys)
total = time.perf_counter() - t0
t0 = time.perf_counter()
est2 = LapSVM(sigma=float(d), gamma_a=1e-4, gamma_i=1.0, graph=est.graph_, backend="nystrom",
              n_components=c, random_state=0).fit(X, ys)
given_graph = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"total_s": total, "given_graph_s": given_graph, "peak_bytes": peak,
                  "accuracy": float(np.mean(est.predict(X) == y)), "n_iter": est.n_iter_,
                  "labeled": int((ys != -1).sum())}))
"""


def bench_krr(n, repeats):
    from sklearn.datasets import make_regression
    from sklearn.kernel_ridge import KernelRidge

    from fastgssl.models import KRR

    X, y = make_regression(n_samples=n + 1000, n_features=20, noise=10.0, random_state=0)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    alpha, gamma = 1e-2, 1e-2  # the baseline script's KernelRidge parameters
    lam, sigma = alpha / n, 1.0 / (2 * gamma)
    KRR(lam=lam, sigma=sigma).fit(Xtr[:200], ytr[:200])  # warm the JIT
    t_sk, ts_sk, sk = median_time(
        lambda: KernelRidge(alpha=alpha, kernel="rbf", gamma=gamma).fit(Xtr, ytr), repeats)
    t_fg, ts_fg, fg = median_time(lambda: KRR(lam=lam, sigma=sigma).fit(Xtr, ytr), repeats)
    t_ny, ts_ny, ny = median_time(
        lambda: KRR(lam=lam, sigma=sigma, backend="nystrom", n_components=300,
                    random_state=0).fit(Xtr, ytr), repeats)
    same = float(np.abs(fg.predict(Xte) - sk.predict(Xte)).max())
    print(f"KRR fit n={n} d=20 (median of {repeats})")
    print(f"  sklearn KernelRidge       {t_sk:8.3f} s {fmt(ts_sk)}  R^2 {sk.score(Xte, yte):.4f}")
    print(f"  fastgssl KRR dense        {t_fg:8.3f} s {fmt(ts_fg)}  R^2 {fg.score(Xte, yte):.4f}"
          f"  ratio {t_fg / t_sk:.2f} (goal <= 1.2); max |pred diff| {same:.2e}")
    print(f"  fastgssl KRR nystrom c300 {t_ny:8.3f} s {fmt(ts_ny)}  R^2 {ny.score(Xte, yte):.4f}"
          f"  ratio {t_ny / t_sk:.3f}")
    return {"krr_sklearn_s": t_sk, "krr_dense_s": t_fg, "krr_nystrom_s": t_ny,
            "krr_dense_ratio": t_fg / t_sk}


def bench_svm(n, repeats):
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    from fastgssl.models import SVM

    X, y = make_classification(n_samples=n + 1000, n_features=20, random_state=0)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    lam, sigma = 1e-4, 20.0
    SVM(lam=lam, sigma=sigma).fit(Xtr[:200], ytr[:200])
    C = 1.0 / (2 * n * lam)
    t_sk, ts_sk, sk = median_time(
        lambda: SVC(C=C, kernel="rbf", gamma=1 / (2 * sigma)).fit(Xtr, ytr), repeats)
    t_fg, ts_fg, fg = median_time(lambda: SVM(lam=lam, sigma=sigma).fit(Xtr, ytr), repeats)
    t_ny, ts_ny, ny = median_time(
        lambda: SVM(lam=lam, sigma=sigma, backend="nystrom", n_components=300,
                    random_state=0).fit(Xtr, ytr), repeats)
    print(f"SVM fit n={n} d=20, C = 1/(2 n lam) = {C:g} (median of {repeats})")
    print(f"  sklearn SVC (hinge, bias) {t_sk:8.3f} s {fmt(ts_sk)}  acc {sk.score(Xte, yte):.4f}")
    print(f"  fastgssl SVM dense h=0.05 {t_fg:8.3f} s {fmt(ts_fg)}  acc {fg.score(Xte, yte):.4f}"
          f"  ratio {t_fg / t_sk:.2f}  Newton iterations {fg.n_iter_}")
    print(f"  fastgssl SVM nystrom c300 {t_ny:8.3f} s {fmt(ts_ny)}  acc {ny.score(Xte, yte):.4f}"
          f"  ratio {t_ny / t_sk:.2f}")
    return {"svm_sklearn_s": t_sk, "svm_dense_s": t_fg, "svm_nystrom_s": t_ny}


def bench_lapsvm_large(n, d, c):
    out = subprocess.run([sys.executable, "-c", LARGE_CHILD, str(n), str(d), str(c)],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"LapSVM nystrom fit n={n} d={d} c={c}, {res['labeled']} labeled (one run, fresh "
          f"process)")
    print(f"  whole fit (kNN graph k=10 included) {res['total_s']:8.2f} s   (goal < 60 s)")
    print(f"  fit on the precomputed graph        {res['given_graph_s']:8.2f} s")
    print(f"  peak resident memory of the process {res['peak_bytes'] / 2**30:8.2f} GiB "
          f"(goal < 4 GiB)")
    print(f"  training accuracy {res['accuracy']:.4f}, Newton iterations {res['n_iter']}")
    return res


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-large", action="store_true", help="skip the n=100,000 LapSVM")
    args = parser.parse_args()
    print(f"cpu_count={os.cpu_count()} load average {os.getloadavg()} (shared machine: "
          f"compare the ratios)")
    results = {}
    results.update(bench_krr(1600 if args.quick else 6400, args.repeats))
    results.update(bench_svm(1000 if args.quick else 2000, args.repeats))
    if not args.skip_large:
        n = 20_000 if args.quick else 100_000
        results["lapsvm_large"] = bench_lapsvm_large(n, 10, 300)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
