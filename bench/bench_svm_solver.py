"""Kernel-machine solver: active-set (piecewise-quadratic losses) against Newton and SVC.

Usage::

    python bench/bench_svm_solver.py [--repeats 3] [--newton-repeats N]
                                     [--sizes 1000 3000 6000] [--lams 1e-6 1e-4 1e-2 1]
                                     [--skip-search]
                                     [--search-repeats 3] [--skip-fit]

Workloads (issue 13; DESIGN 3.9):

1. One ``SVM`` fit (Huber hinge, h = 0.05, one-vs-rest over the 10 digits or one-vs-one with
   ``--multi-class ovo``, dense backend) on
   the first n shared MNIST test images (pixels / 255), sigma = the median heuristic
   (``fastgssl.kernels.default_sigma``), for each lam: ``optimizer="newton"`` (the reference),
   ``optimizer="active-set"`` and ``sklearn.svm.SVC(C = 1 / (2 n lam), gamma = 1 / (2 sigma))``
   (hinge loss with a bias, one-vs-one: the same regularization path, not the same model),
   all in the same run. Every timing includes the kernel matrix; the active-set fit is also
   split into its two parts (``pairwise_kernel`` and ``fit_dense``, medians of separate
   runs). Reported: medians, the ratios to SVC, the largest difference of the decision values
   of the two fastgssl solvers (relative to their largest value), the accuracy on the last
   2,000 test images, the load average after each row.
2. The LapSVM search case: ``make_gaussian_mixture(20000, 50, 10, random_state=0)``, 1,000
   labels (100 per class, ``hide_labels``), ``GridSearchCV(LapSVM(backend="nystrom",
   n_components=500, random_state=0, optimizer=S), grid, cv=5, random_state=0)`` over a 24-point
   grid (sigma, n_neighbors, gamma_a, gamma_i), S = "newton" (before) and "auto" (after:
   the active-set solver for the l-point deformed-kernel fits and the exact transductive
   refits). Reported: the medians of the total search time, the selected parameters and the
   best score of each.

Medians of ``--repeats`` runs; the machine is shared (2 cores, other jobs): compare ratios
measured in the same run, and read the load printed at the start and the end.
"""

import argparse
import os

import numpy as np
from timing import fmt, median_time

# SVM's multi-class coding (--multi-class)
MULTI_CLASS = ["ovr"]


def _load():
    return os.getloadavg()[0]


def _split_kernel_solver(X, y, lam, sigma, repeats):
    """Medians of the two parts of an active-set SVM fit: the kernel matrix, the solver."""
    from fastgssl.kernels import pairwise_kernel
    from fastgssl.losses import get_loss
    from fastgssl.solvers._kernel_fits import fit_dense

    Y = np.where(y[:, None] == np.unique(y)[None, :], 1.0, -1.0)
    t_k, _, K = median_time(lambda: pairwise_kernel(X, kernel="rbf", sigma=sigma), repeats)
    t_s = median_time(lambda: fit_dense(K, Y, np.ones(len(y), dtype=bool), None,
                                        get_loss("huber_hinge", h=0.05), lam, 0.0,
                                        solver="active-set"), repeats)[0]
    return t_k, t_s


def bench_fit(sizes, lams, repeats, newton_repeats):
    from sklearn.svm import SVC

    from fastgssl.datasets import load_mnist_test
    from fastgssl.kernels import default_sigma
    from fastgssl.models import SVM

    X, y = load_mnist_test()
    Xte, yte = X[-2000:], y[-2000:]
    SVM(lam=1e-3, optimizer="active-set").fit(X[:100], y[:100])  # warm the JIT
    SVM(lam=1e-3, optimizer="newton").fit(X[:100], y[:100])
    rows = []
    print(f"== 1. SVM fit on the shared MNIST test images (h = 0.05, "
          f"multi_class={MULTI_CLASS[0]!r}, dense)")
    print(f"{'n':>5} {'lam':>7} {'SVC s':>8} {'newton s':>9} {'active s':>9} "
          f"{'newton/SVC':>10} {'active/SVC':>10} {'newton/active':>13} {'max rel diff':>12} "
          f"{'acc SVC/active':>15}")
    for n in sizes:
        Xtr, ytr = X[:n], y[:n]
        sigma = float(default_sigma(Xtr))
        for lam in lams:
            C = 1.0 / (2 * n * lam)
            t_sk, ts_sk, sk = median_time(
                lambda C=C, sigma=sigma, Xtr=Xtr, ytr=ytr: SVC(
                    C=C, kernel="rbf", gamma=1 / (2 * sigma)).fit(Xtr, ytr), repeats)
            if newton_repeats:
                t_nt, ts_nt, nt = median_time(
                    lambda lam=lam, sigma=sigma, Xtr=Xtr, ytr=ytr: SVM(
                        lam=lam, sigma=sigma, optimizer="newton",
                        multi_class=MULTI_CLASS[0]).fit(Xtr, ytr),
                    newton_repeats)
            t_as, ts_as, act = median_time(
                lambda lam=lam, sigma=sigma, Xtr=Xtr, ytr=ytr: SVM(
                    lam=lam, sigma=sigma, optimizer="active-set",
                    multi_class=MULTI_CLASS[0]).fit(Xtr, ytr),
                repeats)
            t_k, t_s = (_split_kernel_solver(Xtr, ytr, lam, sigma, repeats)
                        if MULTI_CLASS[0] == "ovr" else (float("nan"), float("nan")))
            if not newton_repeats:  # --newton-repeats 0: SVC and active-set only
                t_nt, ts_nt, diff = float("nan"), [], float("nan")
                nt = type("skipped", (), {"n_iter_": None})
            else:
                d_nt, d_as = nt.decision_function(Xte), act.decision_function(Xte)
                diff = float(np.abs(d_nt - d_as).max() / np.abs(d_nt).max())
            acc_sk, acc_as = sk.score(Xte, yte), act.score(Xte, yte)
            print(f"{n:>5} {lam:>7.0e} {t_sk:>8.3f} {t_nt:>9.3f} {t_as:>9.3f} "
                  f"{t_nt / t_sk:>10.2f} {t_as / t_sk:>10.2f} {t_nt / t_as:>13.1f} "
                  f"{diff:>12.1e} {acc_sk:>7.4f}/{acc_as:.4f}  load {_load():.1f}", flush=True)
            print(f"      runs: SVC {fmt(ts_sk)} newton {fmt(ts_nt)} active-set {fmt(ts_as)}; "
                  f"iterations newton {nt.n_iter_}, active-set {act.n_iter_}; of the "
                  f"active-set fit: kernel matrix {t_k:.3f} s, solver {t_s:.3f} s (medians)")
            rows.append((n, lam, t_sk, t_nt, t_as, diff))
    return rows


def bench_search(repeats, newton_repeats):
    from fastgssl.cv import GridSearchCV
    from fastgssl.datasets import hide_labels, make_gaussian_mixture
    from fastgssl.models import LapSVM

    X, y = make_gaussian_mixture(20000, 50, 10, random_state=0)
    ys = hide_labels(y, 100, random_state=0)
    grid = {"sigma": [10.0, 30.0, 100.0], "n_neighbors": [5, 10], "gamma_a": [1e-5, 1e-3],
            "gamma_i": [0.1, 10.0]}
    print("\n== 2. LapSVM search, n = 20,000, d = 50, 10 classes, 1,000 labels, 24 candidates, "
          "5-fold (GridSearchCV, nystrom c = 500)")
    res = {}
    for solver in ("newton", "auto"):
        def run(solver=solver):
            est = LapSVM(backend="nystrom", n_components=500, random_state=0, optimizer=solver)
            return GridSearchCV(est, grid, cv=5, random_state=0).fit(X, ys)

        t, ts, gs = median_time(run, newton_repeats if solver == "newton" else repeats)
        res[solver] = (t, gs)
        print(f"  solver={solver!r:10} total {t:8.2f} s {fmt(ts)}  best {gs.best_params_}  "
              f"score {gs.best_score_:.6f}", flush=True)
    t_n, gs_n = res["newton"]
    t_a, gs_a = res["auto"]
    print(f"  before / after: {t_n / t_a:.2f}x; same selection: "
          f"{gs_n.best_params_ == gs_a.best_params_}; |score difference| "
          f"{abs(gs_n.best_score_ - gs_a.best_score_):.2e}")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--search-repeats", type=int, default=3)
    ap.add_argument("--newton-repeats", type=int, default=None,
                    help="runs of the (slow) Newton reference; default: --repeats / "
                         "--search-repeats")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 6000])
    ap.add_argument("--lams", type=float, nargs="+", default=[1e-6, 1e-4, 1e-2, 1.0])
    ap.add_argument("--skip-fit", action="store_true")
    ap.add_argument("--skip-search", action="store_true")
    ap.add_argument("--multi-class", choices=["ovr", "ovo"], default="ovr",
                    help="SVM's coding of the 10 digits (ovo: one problem per pair, as SVC; "
                         "the fit's kernel / solver split is reported for ovr only)")
    args = ap.parse_args()
    MULTI_CLASS[0] = args.multi_class
    from fastgssl.models import SVM

    print(f"load average at start: {_load():.2f} ({os.cpu_count()} cores); SVM defaults: "
          f"fit_intercept={SVM().get_params().get('fit_intercept')}")
    if not args.skip_fit:
        bench_fit(args.sizes, args.lams, args.repeats,
                  args.repeats if args.newton_repeats is None else args.newton_repeats)
    if not args.skip_search:
        bench_search(args.search_repeats, args.newton_repeats or args.search_repeats)
    print(f"load average at end: {_load():.2f}")


if __name__ == "__main__":
    main()
