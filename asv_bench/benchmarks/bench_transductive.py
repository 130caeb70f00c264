"""Exact transductive model selection (issue 12) against exact inductive selection and t-FBIF.

One semi-supervised workload at n = 600 (LapSVM, 60 labels, 10-NN graph, 5 folds, a 3 x 2 x 2
(sigma, gamma_A, gamma_I) grid): the exact transductive search (``method="exact",
protocol="transductive"``: labels of a fold hidden, every point kept in the graph; one
deformed-kernel setup per width, t refits of size about l per candidate), the exact inductive
search (fold removed, graph rebuilt; seed 000's exact CV) and t-FBIF, on the same folds.

``track_*`` record, in one run (so that the ratios are not skewed by the load of another
run): the selection time (``search_time_``, the median over 3 label draws), its ratio to the
transductive search's, and the held-out error of the selected model (median over the draws).
``time_search_*`` time one search (first draw) with asv's own repeats; the inductive search
takes 10-30 s on a loaded 2-core machine.  Setup compiles the graph kernels first.
"""

import warnings

import numpy as np

from . import LabelDraws, log_environment, noisy_moons, over_label_draws

GRID = {"sigma": [0.1, 0.4, 1.6], "gamma_a": [1e-4, 1e-2], "gamma_i": [1e-2, 1.0]}
METHODS = {
    "transductive": {"method": "exact", "protocol": "transductive"},
    "inductive": {"method": "exact", "protocol": "inductive"},
    "fbif": {"method": "fbif", "n_components": 200},
}


def _search(method, folds):
    from fastgssl.cv import GridSearchCV
    from fastgssl.models import LapSVM

    return GridSearchCV(LapSVM(n_neighbors=10, h=0.01), GRID, cv=folds, random_state=0,
                              **METHODS[method])


def _warm():
    from fastgssl.models import LapSVM

    X, ys, _, _ = noisy_moons(200, 20, 0)
    LapSVM(n_neighbors=10).fit(X, ys)


class TransductiveSelection_n600_labels60_grid3x2x2_t5_test2000_draws3(LabelDraws):
    """Selection time and held-out error of the selected model, medians over 3 label draws."""

    params = list(METHODS)

    def setup_cache(self):
        warnings.simplefilter("ignore")
        log_environment(type(self).__name__)
        _warm()

        def run(method, X, ys, Xte, yte, folds):
            s = _search(method, folds).fit(X, ys)
            return s.search_time_, 1.0 - s.score(Xte, yte)

        rows = over_label_draws(METHODS, self.draws,
                                lambda draw: noisy_moons(600, 60, 2000, draw), run)
        out = {m: np.median(r, axis=0) for m, r in rows.items()}
        out["ratios"] = {m: float(np.median(rows[m][:, 0] / rows["transductive"][:, 0]))
                         for m in METHODS}
        return out

    def track_median_search_seconds(self, out, method):
        return float(out[method][0])

    track_median_search_seconds.unit = "seconds"

    def track_seconds_over_transductive(self, out, method):
        """Search time / the transductive search's time on the same draw (median)."""
        return out["ratios"][method]

    track_seconds_over_transductive.unit = "ratio"

    def track_median_test_error_of_selected(self, out, method):
        return float(out[method][1])

    track_median_test_error_of_selected.unit = "0-1 error"


class TransductiveSelectionTime_n600_labels60_grid3x2x2_t5:
    """One search (first label draw) timed with asv's repeats."""

    params = list(METHODS)
    param_names = ["method"]
    timeout = 900
    number = 1
    repeat = (1, 3, 60.0)
    warmup_time = 0.0

    def setup(self, method):
        from fastgssl.cv import make_folds

        warnings.simplefilter("ignore")
        log_environment(type(self).__name__)
        _warm()
        self.X, self.ys, _, _ = noisy_moons(600, 60, 2000)
        self.folds = make_folds(self.ys, 5, random_state=0)

    def time_search(self, method):
        _search(method, self.folds).set_params(refit=False).fit(self.X, self.ys)
