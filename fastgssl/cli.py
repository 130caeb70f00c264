"""The ``fastgssl`` command.

``fastgssl select`` runs model selection by approximate t-fold cross-validation from one
fit per grid point (t-FBIF / t-BIF of seeds 000 and 001, or exact quadratic CV), on the
bundled default dataset, scikit-learn's digits, or a LIBSVM file (path or shared-dataset
name), and prints the chosen hyper-parameters, the CV criterion, the test error of the
selected model on a held-out 30 % split, and the time of the approximate CV against exact
t-fold CV::

    fastgssl select                                  # SVM on breast cancer, 10-FBIF
    fastgssl select --dataset housing_scale          # KRR, exact quadratic 10-fold CV
    fastgssl select --model lapsvm --labeled-fraction 0.1 --folds 5 --json
    fastgssl select --quick --compare-exact          # also run the exact grid search
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np

__all__ = ["main", "build_parser", "select"]

_REGRESSION_SETS = {"abalone", "housing_scale", "mpg", "space_ga", "eunite2001", "bodyfat",
                    "cpusmall", "triazines", "pyrim", "mg"}
_MODELS = ("krr", "svm", "laprls", "lapsvm")
_METHODS = ("fbif", "bif", "exact", "exact-quadratic", "newton")


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
    sel.add_argument("--dataset", default="breast_cancer",
                     help="breast_cancer (default, bundled), digits, a LIBSVM file path or a "
                          "shared dataset name such as a1a or housing_scale")
    sel.add_argument("--model", choices=_MODELS, default=None,
                     help="default: svm for classification, krr for regression; laprls / "
                          "lapsvm are semi-supervised (see --labeled-fraction)")
    sel.add_argument("--method", choices=_METHODS, default=None,
                     help="CV criterion of the search (default: exact-quadratic for the "
                          "square-loss models krr / laprls, which is exact and cheaper than "
                          "any approximation; fbif for svm / lapsvm)")
    sel.add_argument("--folds", type=int, default=10, help="number of folds t (default 10)")
    sel.add_argument("--labeled-fraction", type=float, default=0.1,
                     help="fraction of training points keeping their label for laprls / "
                          "lapsvm (default 0.1)")
    sel.add_argument("--n-components", type=int, default=None,
                     help="Nystrom columns of fbif (default min(n, 300))")
    sel.add_argument("--quick", action="store_true", help="a thinner grid")
    sel.add_argument("--json", action="store_true", help="print one JSON object")
    sel.add_argument("--compare-exact", action="store_true",
                     help="also run the whole grid search with exact t-fold CV")
    sel.add_argument("--verify", default="best",
                     help="exact verification of the winner for the approximate methods "
                          "(bif, fbif, newton): 'best' (default: "
                          "re-score the first-ranked candidate by exact CV until it is "
                          "verified), 'none', or a cap N on the exact re-scorings")
    sel.add_argument("--n-jobs", type=int, default=None, help="joblib workers")
    sel.add_argument("--random-state", type=int, default=0)
    sel.add_argument("--verbose", "-v", action="count", default=0)
    return parser


def _load(name):
    from fastgssl import datasets

    if name in ("breast_cancer", "breast-cancer-sklearn", "default"):
        X, y = datasets.load_default()
        return X, y, "classification", "breast_cancer (scikit-learn, standardized)"
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X / 16.0, y, "classification", "digits (scikit-learn, pixels / 16)"
    X, y = datasets.load_libsvm(name, dense=True)
    base = str(name).rsplit("/", 1)[-1].removesuffix(".gz")
    task = "regression" if base in _REGRESSION_SETS else None
    if task is None:
        values = np.unique(y)
        integral = np.all(values == np.round(values))
        task = "classification" if integral and len(values) <= 20 else "regression"
    if task == "regression":
        # center and scale the targets (the errors are reported in these units)
        y = (y - y.mean()) / (y.std() or 1.0)
    else:
        # class ids 0..K-1: LIBSVM's "-1" class would read as "unlabeled" for laprls / lapsvm
        y = np.unique(y, return_inverse=True)[1]
    return X, y, task, f"{base} (LIBSVM)"


def _grid(model, X, quick):
    """Seed 001 / 000 style grids, sigma scaled to the data's median squared distance s0.

    Widths far below s0 make K nearly the identity: every held-out prediction is then
    decided by round-off-sized kernel values and no first-order approximation of CV can
    rank them, so the default grid starts at s0 / 8.
    """
    from fastgssl.kernels import default_sigma

    s0 = float(default_sigma(X))
    if model in ("krr", "svm"):
        sig_exp = [-2, 0, 2] if quick else [-3, -2, -1, 0, 1, 2, 3, 4]
        lam_exp = [-15, -9, -3] if quick else [-15, -12, -9, -6, -3, 0]
        return {"sigma": [s0 * 2.0**i for i in sig_exp], "lam": [2.0**i for i in lam_exp]}
    sig_exp = [-2, 0, 2] if quick else [-4, -2, 0, 2, 4]
    ga = [1e-6, 1e-4, 1e-2] if quick else [1e-6, 1e-4, 1e-2, 1.0]
    gi = [1e-4, 1e-2, 1.0] if quick else [1e-6, 1e-4, 1e-2, 1.0]
    return {"sigma": [s0 * 2.0**i for i in sig_exp], "gamma_a": ga, "gamma_i": gi}


def _estimator(model, task, random_state):
    from fastgssl import models

    if model == "krr":
        return models.KRR(task=task, random_state=random_state)
    if task != "classification" and model in ("svm", "lapsvm"):
        raise ValueError(f"--model {model} needs a classification dataset; use krr / laprls.")
    if model == "svm":
        return models.SVM(random_state=random_state)
    if model == "laprls":
        return models.LapRLS(task=task, random_state=random_state)
    return models.LapSVM(random_state=random_state)


def _hide_labels(y, fraction, task, rng):
    """Keep ``fraction`` of the labels (stratified for classification); mark the rest."""
    if not 0 < fraction <= 1:
        raise ValueError(f"--labeled-fraction must be in (0, 1], got {fraction}.")
    n = len(y)
    keep = np.zeros(n, dtype=bool)
    if task == "classification":
        for c in np.unique(y):
            members = np.flatnonzero(y == c)
            k = max(1, int(round(fraction * len(members))))
            keep[rng.choice(members, k, replace=False)] = True
        y_semi = np.where(keep, y, -1)
    else:
        keep[rng.choice(n, max(1, int(round(fraction * n))), replace=False)] = True
        y_semi = np.where(keep, y.astype(float), np.nan)
    return y_semi


def _test_error(est, X, y, task):
    pred = est.predict(X)
    if task == "classification":
        return float(np.mean(pred != y))
    return float(np.mean((pred - y) ** 2))


def select(dataset="breast_cancer", model=None, method=None, folds=10, labeled_fraction=0.1,
           n_components=None, quick=False, compare_exact=False, n_jobs=None, random_state=0,
           verbose=0, verify="best"):
    """Run the ``select`` job and return its report as a dict (what ``--json`` prints)."""
    from sklearn.model_selection import train_test_split

    from fastgssl.cv import ApproxGridSearchCV, cv_result

    X, y, task, description = _load(dataset)
    if model is None:
        model = "svm" if task == "classification" else "krr"
    if method is None:
        method = "exact-quadratic" if model in ("krr", "laprls") else "fbif"
    if method == "exact-quadratic" and model in ("svm", "lapsvm"):
        raise ValueError("--method exact-quadratic needs the square loss: use --model krr or "
                         "laprls.")
    strat = y if task == "classification" else None
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=random_state,
                                              stratify=strat)
    semi = model in ("laprls", "lapsvm")
    rng = np.random.default_rng(random_state)
    y_fit = _hide_labels(y_tr, labeled_fraction, task, rng) if semi else y_tr
    est = _estimator(model, task, random_state)
    grid = _grid(model, X_tr, quick)
    n_cand = int(np.prod([len(v) for v in grid.values()]))
    verify = _parse_verify(verify)  # validated for every method, used by approximate ones
    if method in ("exact", "exact-quadratic"):
        verify = None

    with warnings.catch_warnings(record=True) as caught:
        warnings.filterwarnings("always", message="verify=", category=UserWarning)
        search = ApproxGridSearchCV(est, grid, cv=folds, method=method,
                                    n_components=n_components, n_jobs=n_jobs,
                                    random_state=random_state, verbose=verbose,
                                    verify=verify).fit(X_tr, y_fit)
    cap_messages = [str(w.message) for w in caught if str(w.message).startswith("verify=")]
    for w in caught:  # everything else is passed on unchanged
        if not str(w.message).startswith("verify="):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    best = search.best_estimator_
    report = {
        "dataset": description,
        "task": task,
        "model": model,
        "n_train": int(X_tr.shape[0]),
        "n_labeled": int(np.count_nonzero(search.best_estimator_.labeled_mask_)),
        "n_test": int(X_te.shape[0]),
        "method": method,
        "folds": folds,
        "grid_size": n_cand,
        "best_params": {k: float(v) for k, v in search.best_params_.items()},
        "cv_criterion": search.best_cv_error_,
        "criterion": "0-1 error" if task == "classification" else "mean squared error",
        "test_error": _test_error(best, X_te, y_te, task),
        "search_seconds": search.search_time_,
        "seconds_per_grid_point": search.cost_per_candidate_,
        "verify": verify,
        "n_verified": search.n_verified_,
    }
    # approximate vs exact CV at the selected point: one run of each
    chosen = best.get_params()
    point = type(est)(**chosen)
    t0 = time.perf_counter()
    approx = cv_result(point, X_tr, y_fit, search.folds_, method=method,
                       **({"n_components": n_components} if method == "fbif" else {}))
    t_approx = time.perf_counter() - t0
    t0 = time.perf_counter()
    exact = cv_result(point, X_tr, y_fit, search.folds_, method="exact")
    t_exact = time.perf_counter() - t0
    report["selected_point"] = {
        "approx_cv": approx.score,
        "exact_cv": exact.score,
        "approx_seconds": t_approx,
        "exact_seconds": t_exact,
        "speedup": t_exact / max(t_approx, 1e-12),
        "approx_exact_gap": abs(approx.score - exact.score),
        "exact_graph_mode": exact.graph_mode,
        "approx_form": approx.form,
    }
    gap = report["selected_point"]["approx_exact_gap"]
    report["warnings"] = list(cap_messages)
    verified = bool(verify) and bool(search.cv_results_["verified"][search.best_index_])
    report["winner_verified"] = verified
    if method != "exact" and not verified and gap > max(0.005, 0.25 * exact.score):
        report["warnings"].append(
            f"at the chosen point the {method} criterion ({approx.score:.4f}) differs from "
            f"exact CV ({exact.score:.4f}) by {gap:.4f}; first-order CV approximations are "
            f"optimistic for weakly regularized models (high leverage). "
            + ("Compare with the exact search reported above." if compare_exact
               else "Use --verify best, check with --compare-exact or use --method exact.")
        )
    if compare_exact:
        ex = ApproxGridSearchCV(est, grid, cv=search.folds_, method="exact", n_jobs=n_jobs,
                                random_state=random_state, verbose=verbose).fit(X_tr, y_fit)
        report["exact_search"] = {
            "best_params": {k: float(v) for k, v in ex.best_params_.items()},
            "cv_criterion": ex.best_cv_error_,
            "test_error": _test_error(ex.best_estimator_, X_te, y_te, task),
            "search_seconds": ex.search_time_,
            "speedup": ex.search_time_ / max(search.search_time_, 1e-12),
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
      f"{r['n_test']} test, {r['task']}")
    p(f"model        {r['model']}, {r['folds']}-fold {r['method']} over {r['grid_size']} "
      f"grid points")
    p("chosen       " + ", ".join(f"{k}={v:.4g}" for k, v in r["best_params"].items()))
    p(f"CV criterion {r['cv_criterion']:.4f} ({r['criterion']}, labeled held-out points)")
    p(f"test error   {r['test_error']:.4f} (30 % held-out split)")
    p(f"search time  {r['search_seconds']:.2f} s ({1e3 * r['seconds_per_grid_point']:.1f} ms "
      f"per grid point)" + (f", {r['n_verified']} candidate(s) re-scored by exact CV "
                           f"(--verify {r['verify']})" if r["verify"] else ""))
    s = r["selected_point"]
    p(f"at the chosen point: {r['method']} CV {s['approx_cv']:.4f} in "
      f"{s['approx_seconds']:.3f} s; exact {r['folds']}-CV {s['exact_cv']:.4f} in "
      f"{s['exact_seconds']:.3f} s ({s['speedup']:.1f}x)")
    if "exact_search" in r:
        e = r["exact_search"]
        p("exact search chose " + ", ".join(f"{k}={v:.4g}" for k, v in e["best_params"].items())
          + f": CV {e['cv_criterion']:.4f}, test error {e['test_error']:.4f}, "
          f"{e['search_seconds']:.2f} s ({e['speedup']:.1f}x the {r['method']} search)")


def main(argv=None):
    """Entry point of the ``fastgssl`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.folds < 2:
        parser.error(f"--folds must be >= 2, got {args.folds}")
    try:
        report = select(dataset=args.dataset, model=args.model, method=args.method,
                        folds=args.folds, labeled_fraction=args.labeled_fraction,
                        n_components=args.n_components, quick=args.quick,
                        compare_exact=args.compare_exact, n_jobs=args.n_jobs,
                        random_state=args.random_state,
                        verbose=args.verbose if not args.json else 0, verify=args.verify)
    except (ValueError, FileNotFoundError) as exc:
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
