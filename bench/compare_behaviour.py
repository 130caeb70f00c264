"""Behaviour guard for refactors that must not change results (issue 55).

Runs fixed searches across the CV methods, the kernel machines and the propagation learners
on small seeded data and prints, for each, ``best_params_``, ``cv_results_`` without its
timing columns and every out-of-fold value of every candidate (:func:`fastgssl.cv.cv_result`
under the search's method, protocol and folds); then a few fits whose parameters were renamed
(PoissonMBO's outer iterations, ActiveLearner's criterion). Floats are printed with ``repr``
(round-trip exact), so two outputs compare byte for byte::

    PYTHONPATH=. python bench/compare_behaviour.py > docs/scripts/behaviour_before.txt
    # ... change the code ...
    PYTHONPATH=. python bench/compare_behaviour.py > /tmp/after.txt
    cmp docs/scripts/behaviour_before.txt /tmp/after.txt

The names of renamed parameters are passed through ``_kw`` (the new name when the
estimator takes it, else the old one), so the same script runs before and after a rename.
"""

import inspect
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from fastgssl.active import ActiveLearner, active_learning_loop
from fastgssl.cv import GridSearchCV, cv_result, make_folds
from fastgssl.models import (
    KRR,
    SVM,
    LabelPropagation,
    LapRLS,
    LapSVM,
    LocalGlobalConsistency,
    PoissonLearning,
    PoissonMBO,
    VolumeMBO,
)

TIMING = ("time", "seconds")


def _kw(cls, new, old, value):
    """``{new: value}`` when ``cls`` takes ``new``, else ``{old: value}``."""
    names = inspect.signature(cls).parameters
    return {new if new in names else old: value}


def _fmt(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt(v[k])}" for k in sorted(v)
                               if not any(t in str(k) for t in TIMING)) + "}"
    a = np.asarray(v)
    if a.dtype == object:
        return repr(a.tolist())
    if a.dtype.kind == "f":
        return "[" + " ".join(repr(float(x)) for x in a.ravel()) + f"] shape={a.shape}"
    return repr(a.tolist())


def data(n=72, d=4, k=3, seed=0):
    rng = np.random.RandomState(seed)
    centres = rng.normal(scale=2.0, size=(k, d))
    y = np.arange(n) % k
    X = centres[y] + rng.normal(size=(n, d))
    return X, y


X, Y = data()
Y_SEMI = Y.copy()
Y_SEMI[np.random.RandomState(1).rand(len(Y)) < 0.5] = -1
Y2 = (Y > 0).astype(int)
Y2_SEMI = np.where(Y_SEMI < 0, -1, (Y_SEMI > 0).astype(int))
YR = X[:, 0] + np.sin(X[:, 1])
YR_SEMI = np.where(Y_SEMI < 0, np.nan, YR)
FOLDS = make_folds(Y_SEMI, 4, random_state=0)
FOLDS_FULL = make_folds(Y, 4, random_state=0)


def search(name, est, grid, X, y, folds, method, protocol=None, **kw):
    print(f"=== {name}: {type(est).__name__} method={method} protocol={protocol}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = GridSearchCV(est, grid, cv=folds, method=method, protocol=protocol,
                         random_state=0, refit=False, **kw).fit(X, y)
    print("method_", s.method_, "protocol_", s.protocol_)
    print("best_params_", s.best_params_)
    print("best_index_", s.best_index_)
    for key in sorted(s.cv_results_):
        if any(t in key for t in TIMING):
            continue
        print(" ", key, _fmt(s.cv_results_[key]))
    for i, params in enumerate(ParameterGrid(grid)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = cv_result(clone(est).set_params(**params), X, y, folds, method=s.method_,
                          protocol=s.protocol_, random_state=0,
                          **({"n_components": kw["n_components"]}
                             if "n_components" in kw and s.method_.startswith("fbif")
                             else {}))
        print(f"  oof[{i}] {params} score={r.score!r}")
        print("    predictions", _fmt(r.predictions))
        print("    targets", _fmt(r.targets))
        print("    labeled_index", _fmt(r.labeled_index))


def main():
    np.set_printoptions(threshold=np.inf)
    g_krr = {"lam": [1e-3, 1e-1], "sigma": [1.0, 3.0]}
    g_svm = {"lam": [1e-3, 1e-1], "sigma": [1.0, 3.0]}
    g_lap = {"gamma_i": [1e-2, 1.0], "sigma": [1.0, 3.0]}
    # the kernel machines, supervised, by every CV method
    for method in ("exact", "exact-quadratic", "bif", "fbif"):
        search("krr-reg", KRR(), g_krr, X, YR, FOLDS_FULL, method, n_components=30)
    for method in ("exact", "bif", "fbif", "fbif-margin", "newton"):
        est = SVM() if method != "newton" else KRR(loss="logistic", task="classification")
        search("svm", est, g_svm, X, Y2, FOLDS_FULL, method, n_components=30)
    search("krr-clf", KRR(task="classification"), g_krr, X, Y, FOLDS_FULL, "exact")
    # the Laplacian kernel machines, both protocols
    for method, protocol in (("exact", "transductive"), ("exact", "inductive"),
                             ("auto", None), ("fbif", "inductive"), ("bif", "inductive")):
        search("laprls", LapRLS(n_neighbors=6, task="regression"), g_lap, X, YR_SEMI, FOLDS,
               method, protocol, n_components=30)
    for method, protocol in (("exact", "transductive"), ("auto", None),
                             ("fbif", "inductive")):
        search("lapsvm", LapSVM(n_neighbors=6), g_lap, X, Y2_SEMI, FOLDS, method, protocol,
               n_components=30)
    search("laprls-clf", LapRLS(n_neighbors=6, task="classification"), g_lap, X, Y_SEMI,
           FOLDS, "exact", "transductive")
    # the propagation learners
    search("poisson", PoissonLearning(), {"n_neighbors": [5, 8]}, X, Y_SEMI, FOLDS, "exact")
    search("poisson-auto", PoissonLearning(), {"n_neighbors": [5, 8]}, X, Y_SEMI, FOLDS,
           "auto")
    search("lp", LabelPropagation(), {"n_neighbors": [5, 8]}, X, Y_SEMI, FOLDS, "exact")
    search("lp-lam", LabelPropagation(), {"lam": [1.0, np.inf]}, X, Y_SEMI, FOLDS, "auto")
    search("lgc", LocalGlobalConsistency(), {"alpha": [0.5, 0.99]}, X, Y_SEMI, FOLDS, "exact")
    search("lgc-ind", LocalGlobalConsistency(), {"alpha": [0.5, 0.99]}, X, Y_SEMI, FOLDS,
           "exact", "inductive")
    mbo = PoissonMBO(**_kw(PoissonMBO, "max_iter", "n_mbo_iter", 5))
    search("poisson-mbo", mbo, {"n_neighbors": [5, 8]}, X, Y_SEMI, FOLDS, "exact")
    search("volume-mbo", VolumeMBO(max_iter=20, random_state=0), {"temperature": [0.1, 1.0]},
           X, Y_SEMI, FOLDS, "exact")
    # fits whose parameters were renamed
    for n_iter in (1, 5, 20):
        est = PoissonMBO(**_kw(PoissonMBO, "max_iter", "n_mbo_iter", n_iter)).fit(X, Y_SEMI)
        print(f"=== PoissonMBO iterations={n_iter}")
        print("  transduction_", _fmt(est.transduction_))
        print("  label_distributions_", _fmt(est.label_distributions_))
    for criterion in ("model_change", "uncertainty", "vopt", "sigma_opt"):
        y0 = np.full(len(Y), -1)
        y0[[0, 1, 2]] = Y[[0, 1, 2]]
        kw = _kw(ActiveLearner, "criterion", "method", criterion)
        al = ActiveLearner(PoissonLearning(n_neighbors=6), batch_size=3, random_state=0, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            history = active_learning_loop(al, X, y0, lambda idx: Y[idx], 3)
        print(f"=== active_learning_loop criterion={criterion}")
        for key, value in sorted(vars(history).items()):
            if not any(t in key for t in TIMING):
                print(" ", key, _fmt(value))

if __name__ == "__main__":
    main()
