"""Cross-validation from one fit (seeds 000 / 001): t-FBIF, t-BIF, exact quadratic CV.

Workloads: SVM (Huber hinge) on make_classification and KRR on make_regression (d = 20),
LapSVM with 10 % labels.  ``time_*`` time one CV criterion or one small grid search after
``setup`` fitted once (which compiles every Numba kernel); exact t-fold CV is timed beside
it as the peer.  ``track_*`` record the gap between the approximate and the exact criterion
so that a speed-up that costs accuracy shows.
"""

import warnings

import numpy as np

from . import log_environment


def _classification(n, seed=0):
    from sklearn.datasets import make_classification

    return make_classification(n_samples=n, n_features=20, random_state=seed)


def _regression(n, seed=0):
    from sklearn.datasets import make_regression

    X, y = make_regression(n_samples=n, n_features=20, noise=10.0, random_state=seed)
    return X, (y - y.mean()) / y.std()


class SupervisedCV:
    """One grid point: 10-FBIF / 10-BIF / exact 10-CV of an SVM; exact-quadratic of KRR."""

    params = [500, 1500]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        log_environment(type(self).__name__)
        from fastgssl.cv import make_folds
        from fastgssl.models import KRR, SVM

        warnings.simplefilter("ignore")
        self.X, self.y = _classification(n)
        self.Xr, self.yr = _regression(n)
        self.folds = make_folds(self.y, 10, random_state=0)
        self.rfolds = make_folds(self.yr, 10, classification=False, random_state=0)
        self.svm = SVM(lam=1e-4, sigma=40.0, h=0.05)
        self.krr = KRR(lam=1e-4, sigma=40.0)
        self.svm_fitted = SVM(lam=1e-4, sigma=40.0, h=0.05).fit(self.X, self.y)

    def time_fbif_svm(self, n):
        from fastgssl.cv import cv_score

        cv_score(self.svm, self.X, self.y, self.folds, method="fbif", n_components=200)

    def time_bif_matrix_of_fitted_svm(self, n):
        from fastgssl.cv import bif_matrix

        bif_matrix(self.svm_fitted, self.folds, method="bif")

    def time_exact_cv_svm(self, n):
        from fastgssl.cv import cv_score

        cv_score(self.svm, self.X, self.y, self.folds, method="exact")

    def time_exact_quadratic_krr(self, n):
        from fastgssl.cv import cv_score

        cv_score(self.krr, self.Xr, self.yr, self.rfolds, method="exact-quadratic")

    def time_exact_cv_krr(self, n):
        from fastgssl.cv import cv_score

        cv_score(self.krr, self.Xr, self.yr, self.rfolds, method="exact")

    def track_fbif_minus_exact_error_svm(self, n):
        from fastgssl.cv import cv_score

        a = cv_score(self.svm, self.X, self.y, self.folds, method="fbif", n_components=200)
        return a - cv_score(self.svm, self.X, self.y, self.folds, method="exact")

    track_fbif_minus_exact_error_svm.unit = "0-1 error"


class GridSearch_grid4x4:
    """A 4 x 4 (sigma, lam) grid: kernel / eigendecomposition reuse across the grid."""

    params = (["fbif", "fbif+verify", "exact"], [1000])
    param_names = ["method", "n"]
    timeout = 900

    def setup(self, method, n):
        log_environment(type(self).__name__)
        from fastgssl.cv import GridSearchCV
        from fastgssl.models import KRR, SVM

        warnings.simplefilter("ignore")
        self.X, self.y = _classification(n)
        self.Xr, self.yr = _regression(n)
        self.grid = {"sigma": [10.0, 40.0, 160.0, 640.0], "lam": [1e-6, 1e-4, 1e-2, 1.0]}
        self.Search, self.SVM, self.KRR = GridSearchCV, SVM, KRR
        self.Search(SVM(), {"lam": [1e-2]}, cv=3).fit(self.X[:100], self.y[:100])  # warm JIT

    def _svm(self, method):
        base, _, verify = method.partition("+")
        return self.Search(self.SVM(), self.grid, cv=10, method=base, random_state=0,
                           verify="best" if verify else None).fit(self.X, self.y)

    def time_svm_search(self, method, n):
        self._svm(method)

    def time_krr_search(self, method, n):
        m = {"exact": "exact-quadratic", "fbif+verify": "fbif"}.get(method, method)
        self.Search(self.KRR(), self.grid, cv=10, method=m, random_state=0,
                    verify="best" if method == "fbif+verify" else None).fit(self.Xr, self.yr)

    def track_svm_search_criterion_of_selected(self, method, n):
        """The search's own criterion at its winner (its exact CV error when verified; a
        plain FBIF argmin reads 0 here).  What the selection is worth is tracked by
        ``bench_selection``: the exact CV and test errors of the selected model."""
        return self._svm(method).best_cv_error_

    track_svm_search_criterion_of_selected.unit = "0-1 error"

    def track_svm_exact_verifications(self, method, n):
        return self._svm(method).n_verified_

    track_svm_exact_verifications.unit = "refit groups"


class SemiSupervisedCV:
    """LapSVM with 10 % labels: 5-FBIF against exact 5-CV (graph rebuilt per fold)."""

    params = [800]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        log_environment(type(self).__name__)
        from fastgssl.cv import make_folds
        from fastgssl.models import LapSVM

        warnings.simplefilter("ignore")
        X, y = _classification(n)
        rng = np.random.default_rng(0)
        y = y.copy()
        y[rng.permutation(n)[: int(0.9 * n)]] = -1
        self.X, self.y = X, y
        self.folds = make_folds(y, 5, random_state=0)
        self.est = LapSVM(sigma=40.0, gamma_a=1e-3, gamma_i=1e-2, n_neighbors=8)
        self.est.fit(X, y)  # warm the graph and solver kernels

    def time_fbif(self, n):
        from fastgssl.cv import cv_score

        cv_score(self.est, self.X, self.y, self.folds, method="fbif", n_components=200)

    def time_exact(self, n):
        from fastgssl.cv import cv_score

        cv_score(self.est, self.X, self.y, self.folds, method="exact")

    def track_fbif_minus_exact_error(self, n):
        from fastgssl.cv import cv_score

        a = cv_score(self.est, self.X, self.y, self.folds, method="fbif", n_components=200)
        return a - cv_score(self.est, self.X, self.y, self.folds, method="exact")

    track_fbif_minus_exact_error.unit = "0-1 error"
