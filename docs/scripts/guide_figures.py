"""The small figures of the user guide, rerun on the current code (issue 43).

- quickstart.rst: the first example's exact 5-fold CV error of ``LapSVM(sigma=0.5,
  gamma_a=1e-5, gamma_i=1.0)`` on ``make_moons(500, noise=0.2)`` with 10 labels per class,
  the model's error on the unlabeled points, ``cv_score(..., method="fbif")`` on the same
  model and whether it warns (``OptimisticCriterionWarning``), and the grid search's
  ``best_cv_error_``;
- cv.rst / plot_cv_surface: exact 5-fold CV of ``SVM()`` over the example's bottom-left
  corner (``sigma`` 10-40, ``lam`` 1e-8 - 1e-6) on the breast-cancer data, where t-FBIF
  reads 0;
- cv.rst: the collapse without the intercept: plain 10-fold t-FBIF (``verify=None``) of
  ``SVM(fit_intercept=False)`` and of ``SVM()`` over seed 001's 31 x 16 grid on heart,
  split 0 of its protocol (``bench/bench_model_selection.py``'s ``load`` / ``split`` /
  ``grid_for``): how many candidates read 0, the argmin and its test error;
- learners.rst: one ten-class ``SVM()`` fit on the first 1,000 digits (all labeled,
  features / 16), one-vs-one against one-vs-rest: median wall and CPU seconds of
  ``--repeats`` fits after a warm-up fit (compilation excluded).

Run single-threaded; prints each figure and writes them to ``--out`` (JSON)::

    FASTGSSL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python docs/scripts/guide_figures.py --out docs/scripts/guide_figures.json
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits, make_moons

from fastgssl import OptimisticCriterionWarning
from fastgssl.cv import GridSearchCV, cv_score
from fastgssl.datasets import load_default
from fastgssl.models import SVM, LapSVM


def quickstart():
    X, y = make_moons(500, noise=0.2, random_state=0)
    labeled = np.r_[np.flatnonzero(y == 0)[:10], np.flatnonzero(y == 1)[:10]]
    y_ssl = np.full(500, -1)
    y_ssl[labeled] = y[labeled]
    model = LapSVM(sigma=0.5, gamma_a=1e-5, gamma_i=1.0, n_neighbors=10).fit(X, y_ssl)
    exact = cv_score(model, X, y_ssl, folds=5, random_state=0)
    unl = y_ssl == -1
    err = float(np.mean(model.predict(X)[unl] != y[unl]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fbif = cv_score(model, X, y_ssl, folds=5, random_state=0, method="fbif")
    warned = any(issubclass(w.category, OptimisticCriterionWarning) for w in caught)
    search = GridSearchCV(
        LapSVM(n_neighbors=10),
        {"sigma": [0.25, 1.0], "gamma_a": [1e-5, 1e-2], "gamma_i": [0.1, 1.0]},
        cv=5).fit(X, y_ssl)
    return dict(cv_exact=float(exact), unlabeled_error=err, cv_fbif=float(fbif),
                fbif_warns=warned, search_best_params=search.best_params_,
                search_best_cv_error=float(search.best_cv_error_),
                search_best_score=float(search.best_score_))


def cv_surface_corner():
    X, y = load_default()
    grid = {"sigma": [10.0, 40.0], "lam": [1e-8, 1e-6]}
    exact = GridSearchCV(SVM(), grid, cv=5, method="exact", random_state=0).fit(X, y)
    fbif = GridSearchCV(SVM(), grid, cv=5, method="fbif", verify=None,
                        random_state=0).fit(X, y)
    return dict(params=[dict(p) for p in exact.cv_results_["params"]],
                exact=[float(v) for v in exact.cv_results_["mean_cv_error"]],
                fbif=[float(v) for v in fbif.cv_results_["mean_cv_error"]])


def fbif_collapse_heart():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "bench"))
    from bench_model_selection import grid_for, load, split

    X, y, task = load("heart")
    X_tr, X_te, y_tr, y_te = split(X, y, 0, task)[:4]
    grid = grid_for(task, False)
    out = {}
    for name, intercept in (("no_intercept", False), ("intercept", True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimisticCriterionWarning)
            s = GridSearchCV(SVM(fit_intercept=intercept), grid, cv=10, method="fbif",
                             verify=None, random_state=0).fit(X_tr, y_tr)
        err = np.asarray(s.cv_results_["mean_cv_error"])
        zeros = [p for p, v in zip(s.cv_results_["params"], err) if v == 0.0]
        out[name] = dict(candidates=len(err), at_zero=len(zeros), min=float(err.min()),
                         zero_sigma_max=max((p["sigma"] for p in zeros), default=None),
                         best_params=s.best_params_,
                         test_error=float(np.mean(s.predict(X_te) != y_te)))
    return out


def ovo_ovr(repeats):
    X, y = load_digits(return_X_y=True)
    X, y = X[:1000] / 16.0, y[:1000]
    out = {}
    for mc in ("ovo", "ovr"):
        SVM(multi_class=mc).fit(X, y)                          # warm-up: compilation
        walls, cpus = [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            SVM(multi_class=mc).fit(X, y)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        out[mc] = dict(wall=walls, cpu=cpus, wall_median=statistics.median(walls),
                       cpu_median=statistics.median(cpus))
    out["ratio_cpu_ovr_over_ovo"] = out["ovr"]["cpu_median"] / out["ovo"]["cpu_median"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    res = dict(commit=commit, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               load1_start=os.getloadavg()[0],
               threads={k: os.environ.get(k) for k in (
                   "FASTGSSL_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    res["quickstart"] = quickstart()
    print("quickstart:", res["quickstart"], flush=True)
    res["cv_surface_corner"] = cv_surface_corner()
    print("cv surface corner:", res["cv_surface_corner"], flush=True)
    res["fbif_collapse_heart"] = fbif_collapse_heart()
    print("t-FBIF on heart, split 0:", res["fbif_collapse_heart"], flush=True)
    res["ovo_ovr_digits1000"] = ovo_ovr(args.repeats)
    o = res["ovo_ovr_digits1000"]
    print(f"SVM fit on 1,000 digits: ovo {o['ovo']['wall_median']:.3f} s "
          f"({o['ovo']['cpu_median']:.3f} CPU s), ovr {o['ovr']['wall_median']:.3f} s "
          f"({o['ovr']['cpu_median']:.3f} CPU s); CPU ratio {o['ratio_cpu_ovr_over_ovo']:.1f}x",
          flush=True)
    res["load1_end"] = os.getloadavg()[0]
    print(f"load {res['load1_start']:.2f} -> {res['load1_end']:.2f}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(res, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
