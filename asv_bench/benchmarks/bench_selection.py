"""What a search selects: the exact CV error and the held-out error of the chosen model.

A search's own criterion cannot show a worse selection: t-FBIF scores the weakly
regularized corner of a grid (small ``lam`` and ``sigma``) near 0 however badly the models
there generalize.  These tracks therefore re-score the *selected* hyper-parameters by exact
10-fold CV on the search's folds and by the error on a held-out test set, on grids that
reach that corner, so that a change which makes a method select worse models shows even when
its criterion improves.  Sizes are in the class names (training points, grid shape, test
points); the semi-supervised workload repeats the selection over several label draws and
records the median.

All searches of a class run once in ``setup_cache`` (asv passes the results to every
``track_*``).
"""

import warnings

import numpy as np

from . import LabelDraws, log_environment, noisy_moons, over_label_draws

SVM_GRID = {"sigma": [2.5, 10.0, 40.0, 160.0, 640.0],
            "lam": [1e-8, 1e-6, 1e-4, 1e-2, 1.0]}
LAPSVM_GRID = {"sigma": [2.0, 32.0], "gamma_a": [1e-7, 1e-4, 1e-1], "gamma_i": [1e-3, 1.0]}
METHODS = ["fbif", "fbif+verify", "exact", "auto"]


def _search(estimator, grid, method, folds):
    from fastgssl.cv import GridSearchCV as OurGridSearchCV

    base, _, verify = method.partition("+")
    return OurGridSearchCV(estimator, grid, cv=folds, method=base, random_state=0,
                              verify="best" if verify else None)


def _exact_cv_error(estimator, params, X, y, folds):
    from sklearn.base import clone

    from fastgssl.cv import cv_score

    return float(cv_score(clone(estimator).set_params(**params), X, y, folds,
                          method="exact", protocol="inductive"))


class SVMSelection_n600_grid5x5_test2000:
    """Huber SVM on make_classification (d = 20, 5 % flipped labels), 10 folds."""

    params = METHODS
    param_names = ["method"]
    timeout = 1800

    def setup_cache(self):
        from sklearn.datasets import make_classification

        from fastgssl.cv import make_folds
        from fastgssl.models import SVM

        warnings.simplefilter("ignore")
        log_environment(type(self).__name__)
        X, y = make_classification(n_samples=2600, n_features=20, n_informative=10,
                                   flip_y=0.05, random_state=0)
        X, y, Xte, yte = X[:600], y[:600], X[600:], y[600:]
        folds = make_folds(y, 10, random_state=0)
        out = {}
        for method in METHODS:
            s = _search(SVM(), SVM_GRID, method, folds).fit(X, y)
            out[method] = {
                "criterion": s.best_cv_error_,
                "exact_cv": _exact_cv_error(SVM(), s.best_params_, X, y, folds),
                "test": 1.0 - s.score(Xte, yte),
                "verifications": s.n_verified_,
                "seconds": s.search_time_,
            }
        return out

    def track_exact_cv_error_of_selected(self, out, method):
        return out[method]["exact_cv"]

    track_exact_cv_error_of_selected.unit = "0-1 error"

    def track_test_error_of_selected(self, out, method):
        return out[method]["test"]

    track_test_error_of_selected.unit = "0-1 error"

    def track_search_criterion_of_selected(self, out, method):
        """The search's own criterion at its winner (0 for a plain FBIF argmin)."""
        return out[method]["criterion"]

    track_search_criterion_of_selected.unit = "0-1 error"

    def track_exact_verifications(self, out, method):
        return out[method]["verifications"]

    track_exact_verifications.unit = "candidates"

    def track_search_seconds(self, out, method):
        return out[method]["seconds"]

    track_search_seconds.unit = "seconds"


class LapSVMSelection_n400_labels40_grid2x3x2_test2000_draws3(LabelDraws):
    """LapSVM, 40 labels among 400 points (10-NN graph), 5 folds, 3 label draws: medians."""

    params = METHODS

    def setup_cache(self):
        from fastgssl.models import LapSVM

        warnings.simplefilter("ignore")
        log_environment(type(self).__name__)

        def run(method, X, ys, Xte, yte, folds):
            s = _search(LapSVM(n_neighbors=10), LAPSVM_GRID, method, folds).fit(X, ys)
            return (_exact_cv_error(LapSVM(n_neighbors=10), s.best_params_, X, ys, folds),
                    1.0 - s.score(Xte, yte), s.best_cv_error_, s.search_time_)

        rows = over_label_draws(METHODS, self.draws,
                                lambda draw: noisy_moons(400, 40, 2000, draw), run)
        return {m: np.median(r, axis=0) for m, r in rows.items()}

    def track_median_exact_inductive_cv_error_of_selected(self, out, method):
        """Exact inductive 5-fold CV error of the selected model (median over draws)."""
        return float(out[method][0])

    track_median_exact_inductive_cv_error_of_selected.unit = "0-1 error"

    def track_median_test_error_of_selected(self, out, method):
        return float(out[method][1])

    track_median_test_error_of_selected.unit = "0-1 error"

    def track_median_search_criterion_of_selected(self, out, method):
        return float(out[method][2])

    track_median_search_criterion_of_selected.unit = "0-1 error"

    def track_median_search_seconds(self, out, method):
        return float(out[method][3])

    track_median_search_seconds.unit = "seconds"


class SVMSelectionVsGridSearchCV_n500_grid12_t10:
    """Exact 10-fold SVM selection against ``GridSearchCV(SVC)`` on the same folds (issue 13).

    make_classification (d = 20, 5 % flipped labels), 500 training points, 2000 test points;
    grid sigma = s0 x {1/4, 1, 4}, lam in {1e-6, 1e-4, 1e-2, 1} (SVC: gamma = 1 / (2 sigma),
    C = 1 / (2 n' lam), n' = 450 the folds' training size), ``PredefinedSplit`` of
    ``fastgssl.cv.make_folds``. Both searches run back to back in ``setup_cache`` (three
    rounds, medians), so ``track_ratio_gridsearchcv_over_ours`` is a ratio within one run;
    ``time_search`` times each side on its own.
    """

    params = ["fastgssl-exact", "sklearn-GridSearchCV"]
    param_names = ["implementation"]
    timeout = 600

    @staticmethod
    def _data():
        from sklearn.datasets import make_classification

        X, y = make_classification(n_samples=2500, n_features=20, n_informative=10,
                                   flip_y=0.05, random_state=1)
        X = (X - X[:500].mean(0)) / X[:500].std(0)
        return X[:500], y[:500], X[500:], y[500:]

    @staticmethod
    def _search(impl, X, y, folds):
        from sklearn.model_selection import GridSearchCV, PredefinedSplit
        from sklearn.svm import SVC

        from fastgssl.cv import GridSearchCV as OurGridSearchCV
        from fastgssl.kernels import default_sigma
        from fastgssl.models import SVM

        s0 = float(default_sigma(X))
        sig, lam = [s0 / 4, s0, 4 * s0], [1e-6, 1e-4, 1e-2, 1.0]
        if impl == "fastgssl-exact":
            return OurGridSearchCV(SVM(h=0.05), {"sigma": sig, "lam": lam}, cv=folds,
                                      method="exact")
        n_fit = X.shape[0] * 0.9
        grid = {"gamma": [1 / (2 * s) for s in sig], "C": [1 / (2 * n_fit * v) for v in lam]}
        return GridSearchCV(SVC(kernel="rbf"), grid, cv=PredefinedSplit(folds))

    def setup_cache(self):
        import time

        from fastgssl.cv import make_folds

        warnings.simplefilter("ignore")
        log_environment(type(self).__name__)
        X, y, Xte, yte = self._data()
        folds = make_folds(y, 10, random_state=0)
        self._search("fastgssl-exact", X[:60], y[:60], make_folds(y[:60], 3, random_state=0)
                     ).fit(X[:60], y[:60])  # compile outside the timings
        out = {impl: {"seconds": [], "test": None} for impl in self.params}
        for _ in range(3):
            for impl in self.params:
                t0 = time.perf_counter()
                s = self._search(impl, X, y, folds).fit(X, y)
                out[impl]["seconds"].append(time.perf_counter() - t0)
                out[impl]["test"] = float(np.mean(s.predict(Xte) != yte))
        return {"data": (X, y, folds),
                "seconds": {k: float(np.median(v["seconds"])) for k, v in out.items()},
                "test": {k: v["test"] for k, v in out.items()}}

    def time_search(self, cache, impl):
        X, y, folds = cache["data"]
        self._search(impl, X, y, folds).fit(X, y)

    def track_ratio_gridsearchcv_over_ours(self, cache, impl):
        sec = cache["seconds"]
        return sec["sklearn-GridSearchCV"] / sec["fastgssl-exact"]

    track_ratio_gridsearchcv_over_ours.unit = "x"

    def track_test_error_of_selected(self, cache, impl):
        return cache["test"][impl]

    track_test_error_of_selected.unit = "0-1 error"
