"""GridSearchCV against brute force (one cv_score per grid point)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from fastgssl.cv import ApproxGridSearchCV, GridSearchCV, cv_result, cv_score, make_folds
from fastgssl.models import KRR, SVM, LapRLS


def brute_force(est, grid, X, y, folds, method, **opts):
    errors = []
    params = list(ParameterGrid(grid))
    for p in params:
        errors.append(cv_score(clone(est).set_params(**p), X, y, folds, method=method, **opts))
    return params, np.array(errors)


def regression_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("method", ["exact-quadratic", "bif", "fbif", "fbif-margin", "exact"])
def test_krr_search_equals_brute_force(method):
    X, y = regression_data()
    grid = {"sigma": [0.5, 2.0], "lam": [1e-4, 1e-2, 1.0]}
    folds = make_folds(y, 5, classification=False, random_state=0)
    opts = {"n_components": 25, "random_state": 0} if "fbif" in method else {}
    params, errors = brute_force(KRR(), grid, X, y, folds, method, **opts)
    search = GridSearchCV(KRR(), grid, cv=folds, method=method,
                                n_components=opts.get("n_components"), random_state=0).fit(X, y)
    assert search.cv_results_["params"] == params
    assert np.allclose(search.cv_results_["mean_cv_error"], errors, rtol=1e-7, atol=1e-12)
    assert search.best_params_ == params[int(np.argmin(errors))]
    assert search.best_score_ == pytest.approx(-errors.min())
    assert search.best_estimator_.get_params()["lam"] == search.best_params_["lam"]


@pytest.mark.parametrize("method", ["fbif", "fbif-margin", "exact"])
def test_svm_search_equals_brute_force_and_parallel(method):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, "pos", "neg")
    grid = {"sigma": [0.5, 4.0], "lam": [1e-3, 1e-1]}
    folds = make_folds(y, 4, random_state=0)
    _, errors = brute_force(SVM(), grid, X, y, folds, method)
    search = GridSearchCV(SVM(), grid, cv=folds, method=method).fit(X, y)
    assert np.allclose(search.cv_results_["mean_cv_error"], errors)
    par = GridSearchCV(SVM(), grid, cv=folds, method=method, n_jobs=2).fit(X, y)
    assert np.allclose(par.cv_results_["mean_cv_error"], errors)
    assert par.best_params_ == search.best_params_
    # accuracy convention: higher is better
    assert search.best_score_ == pytest.approx(1 - errors.min())
    assert set(search.predict(X)) <= {"pos", "neg"}
    assert search.classes_.tolist() == ["neg", "pos"]


def test_semi_supervised_search_shares_the_graph_and_equals_brute_force():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 2))
    y = np.where(X[:, 0] > 0, 1, 0)
    y[rng.permutation(50)[:30]] = -1
    grid = {"gamma_a": [1e-3, 1e-1], "gamma_i": [0.1, 10.0], "n_neighbors": [4, 8]}
    est = LapRLS(sigma=1.0, task="classification")
    folds = make_folds(y, 4, random_state=0)
    for method in ("bif", "fbif"):
        opts = {"n_components": 20, "random_state": 0} if method == "fbif" else {}
        _, errors = brute_force(est, grid, X, y, folds, method, **opts)
        search = GridSearchCV(est, grid, cv=folds, method=method,
                                    n_components=opts.get("n_components"),
                                    random_state=0).fit(X, y)
        assert np.allclose(search.cv_results_["mean_cv_error"], errors)


def test_cv_results_layout_progress_and_refit_false(capsys):
    X, y = regression_data(40)
    grid = [{"sigma": [1.0], "lam": [1e-3, 1e-1]}, {"sigma": [3.0], "lam": [1e-2]}]
    search = GridSearchCV(KRR(), grid, cv=4, method="exact-quadratic", verbose=1,
                                refit=False, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "3 candidates" in out and "3/3" in out
    r = search.cv_results_
    for key in ("params", "param_sigma", "param_lam", "mean_test_score", "std_test_score",
                "rank_test_score", "split0_test_score", "split3_test_score", "mean_cv_error",
                "cost_seconds"):
        assert key in r
    assert r["rank_test_score"][search.best_index_] == 1
    assert np.all(r["mean_test_score"] == -r["mean_cv_error"])  # neg MSE for regressors
    assert search.n_splits_ == 4 and search.folds_.shape == (40,)
    assert search.cost_per_candidate_ > 0
    assert not hasattr(search, "best_estimator_")
    with pytest.raises(AttributeError, match="refit=False"):
        search.predict(X)


def test_search_bad_input():
    X, y = regression_data(30)
    with pytest.raises(ValueError, match="scoring"):
        GridSearchCV(KRR(), {"lam": [1.0]}, scoring="not-a-scorer").fit(X, y)
    with pytest.raises(ValueError, match=">= 2"):
        GridSearchCV(KRR(), {"lam": [1.0]}, cv=1).fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        GridSearchCV(KRR(), {"lam": [-1.0]}, cv=3, method="bif").fit(X, y)


def overfitting_grid_data(seed=0):
    """Noisy labels and a grid reaching nearly interpolating models (FBIF is optimistic)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 5))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=80) > 0, 1, 0)
    grid = {"sigma": [0.05, 0.5, 8.0, 32.0], "lam": [1e-5, 1e-3, 1e-1]}
    return X, y, grid


def test_verify_best_rescores_the_winner_exactly():
    X, y, grid = overfitting_grid_data()
    folds = make_folds(y, 5, random_state=0)
    params, exact = brute_force(SVM(), grid, X, y, folds, "exact")
    plain = GridSearchCV(SVM(), grid, cv=folds, method="fbif", random_state=0).fit(X, y)
    assert plain.n_verified_ == 0 and "verified" not in plain.cv_results_
    search = GridSearchCV(SVM(), grid, cv=folds, method="fbif", random_state=0,
                                verify="best").fit(X, y)
    res = search.cv_results_
    verified = res["verified"]
    assert search.n_verified_ == int(verified.sum()) >= 1
    assert verified[search.best_index_]
    # verified entries carry the exact CV error, the others the untouched FBIF criterion
    assert np.allclose(res["exact_cv_error"][verified], exact[verified])
    assert np.all(np.isnan(res["exact_cv_error"][~verified]))
    assert np.allclose(res["approx_cv_error"], plain.cv_results_["mean_cv_error"])
    assert np.allclose(res["mean_cv_error"][~verified], res["approx_cv_error"][~verified])
    # the winner's exact error is no larger than any unverified criterion
    assert search.best_cv_error_ == pytest.approx(exact[search.best_index_])
    assert np.all(search.best_cv_error_ <= res["mean_cv_error"] + 1e-15)
    # on this grid the plain FBIF argmin is an optimistic, nearly interpolating candidate
    assert exact[plain.best_index_] > plain.best_cv_error_


def test_verify_leaves_exact_methods_alone():
    X, y = regression_data()
    grid = {"sigma": [0.3, 1.0], "lam": [1e-4, 1e-2, 1e-1]}
    folds = make_folds(y, 3, classification=False, random_state=0)
    for method in ("exact-quadratic", "exact"):
        plain = GridSearchCV(KRR(), grid, cv=folds, method=method).fit(X, y)
        ver = GridSearchCV(KRR(), grid, cv=folds, method=method, verify="best").fit(X, y)
        assert ver.n_verified_ == 0 and "verified" not in ver.cv_results_
        assert np.array_equal(ver.cv_results_["mean_cv_error"],
                              plain.cv_results_["mean_cv_error"])


def test_verify_cap_warns_and_bad_values():
    X, y, grid = overfitting_grid_data()
    folds = make_folds(y, 5, random_state=0)
    search = GridSearchCV(SVM(), grid, cv=folds, method="fbif", random_state=0,
                                verify="best").fit(X, y)
    if search.n_verified_ >= 2:  # a cap below the number needed stops early with a warning
        with pytest.warns(UserWarning, match="stopped after 1 exact verification"):
            capped = GridSearchCV(SVM(), grid, cv=folds, method="fbif",
                                        random_state=0, verify=1).fit(X, y)
        assert capped.n_verified_ == 1
    for bad in ("all", 0, -2, 1.5, True):
        with pytest.raises(ValueError, match="verify must be"):
            GridSearchCV(SVM(), grid, cv=folds, verify=bad).fit(X, y)


@pytest.mark.parametrize("mu", [1e-4, 1e-1, 10.0])
@pytest.mark.parametrize("two_d", [False, True])
def test_exact_quadratic_cholesky_equals_the_eigendecomposition(mu, two_d):
    from fastgssl.cv._quadratic import exact_quadratic_cholesky, exact_quadratic_eigh
    from fastgssl.kernels import rbf_kernel

    X, y = regression_data(90, seed=3)
    Y = np.column_stack([y, y**2]) if two_d else y
    K = rbf_kernel(X, sigma=1.5)
    folds = make_folds(y, 7, classification=False, random_state=2)  # unequal fold sizes
    evals, evecs = np.linalg.eigh(K)
    ref_pred, ref_f = exact_quadratic_eigh(np.clip(evals, 0, None), evecs, Y, folds, 7, mu)
    pred, f = exact_quadratic_cholesky(K, Y, folds, 7, mu)
    assert np.allclose(pred, ref_pred, rtol=1e-9, atol=1e-11)
    assert np.allclose(f, ref_f, rtol=1e-9, atol=1e-11)


def test_exact_quadratic_cholesky_reports_indefinite_matrices():
    from fastgssl.cv._quadratic import exact_quadratic_cholesky

    rng = np.random.default_rng(0)
    B = rng.normal(size=(20, 20))
    K = B + B.T  # indefinite
    folds = np.arange(20) % 4
    assert exact_quadratic_cholesky(K, rng.normal(size=20), folds, 4, 1e-3) is None


def test_krr_search_many_lams_uses_the_eigendecomposition_path():
    # more lam values per width than the Cholesky path takes: same numbers either way
    X, y = regression_data()
    folds = make_folds(y, 5, classification=False, random_state=0)
    lams = list(np.logspace(-5, 0, 17))
    grid = {"sigma": [1.0], "lam": lams}
    params, errors = brute_force(KRR(), grid, X, y, folds, "exact-quadratic")
    search = GridSearchCV(KRR(), grid, cv=folds, method="exact-quadratic").fit(X, y)
    assert np.allclose(search.cv_results_["mean_cv_error"], errors, rtol=1e-7, atol=1e-12)


# ------------------------------------------------- t-FBIF at the interpolating corner (issue 28)


def corner_data(n=40, seed=3):
    """Two overlapping classes in 2-D: at sigma = 1e-6 the RBF kernel matrix is the identity
    (exactly: exp(-d^2 / 2e-6) underflows to 0 for every pair)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    return X, y


def test_paper_fbif_collapses_to_the_training_error_at_the_interpolating_corner():
    """K = I, every point in the Huber band: the fit has y_j f_j = z* = (1+h) / (1 + 4 h n lam)
    (training error 0); seed 001's t-FBIF with c = n predicts y_j z* / (1 + 4 h n lam) > 0
    for every held-out point (criterion 0), while the refits without fold i predict exactly 0
    at its points (no kernel mass reaches them), i.e. every held-out point of class +1 is
    misclassified under the `f > 0` rule."""
    X, y = corner_data()
    n, h, lam, t = len(y), 0.05, 1e-3, 5
    est = SVM(sigma=1e-6, lam=lam, h=h, fit_intercept=False)
    fitted = clone(est).fit(X, y)
    assert np.array_equal(fitted.kernel_train_, np.eye(n))
    ys = 2.0 * y - 1.0
    z = (1 + h) / (1 + 4 * h * n * lam)
    assert np.allclose(ys * fitted.decision_train_, z, rtol=1e-7)
    folds = make_folds(y, t, random_state=0)
    res = cv_result(est, X, y, folds, method="fbif", n_components=n)
    assert np.allclose(ys * res.predictions, z / (1 + 4 * h * n * lam), rtol=1e-6)
    assert res.score == 0.0
    # truth: brute-force refits without each fold
    pred = np.empty(n)
    for i in range(t):
        out = folds == i
        refit = clone(est).fit(X[~out], y[~out])
        pred[out] = refit.decision_function(X[out])
    assert np.all(pred == 0.0)
    exact = cv_score(est, X, y, folds, method="exact")
    assert exact == pytest.approx(np.mean(y == 1))
    assert exact > 0.3


def test_unverified_fbif_warns_and_breaks_ties_toward_the_largest_lam():
    from fastgssl import OptimisticCriterionWarning

    X, y = corner_data()
    n = len(y)
    grid = {"sigma": [1e-6], "lam": [1e-5, 1e-4, 1e-3]}
    with pytest.warns(OptimisticCriterionWarning, match="training error") as record:
        s = GridSearchCV(SVM(fit_intercept=False), grid, cv=5, method="fbif",
                               n_components=n, verify=None, random_state=0).fit(X, y)
    assert "verify='best'" in str(record[0].message)
    errors = s.cv_results_["mean_cv_error"]
    assert np.all(errors == 0.0)  # a three-way tie at the training error
    assert s.best_params_ == {"lam": 1e-3, "sigma": 1e-6}  # the most regularized, not the first
    assert s.best_index_ == 2 and s.cv_results_["rank_test_score"].tolist() == [1, 1, 1]


def test_tie_break_against_the_ranking_rule():
    """A mixed grid: the winner is the largest lam among the candidates of minimal criterion."""
    X, y = corner_data(60, seed=5)
    grid = {"sigma": [1e-6, 0.5, 2.0], "lam": [1e-5, 1e-4, 1e-1]}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = GridSearchCV(SVM(fit_intercept=False), grid, cv=4, method="bif",
                               random_state=0).fit(X, y)
    err = s.cv_results_["mean_cv_error"]
    tied = np.flatnonzero(err == err.min())
    lams = np.array([s.cv_results_["params"][i]["lam"] for i in tied])
    assert s.best_index_ == tied[np.flatnonzero(lams == lams.max())[0]]
    assert len(tied) > 1 and s.best_index_ != tied[0]


def test_verified_search_does_not_warn_and_keeps_its_winner():
    import warnings

    from fastgssl import OptimisticCriterionWarning

    X, y = corner_data()
    grid = {"sigma": [1e-6, 1.0], "lam": [1e-4, 1e-2]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", OptimisticCriterionWarning)
        s = GridSearchCV(SVM(fit_intercept=False), grid, cv=5, method="fbif",
                               verify="best", random_state=0).fit(X, y)
    assert s.cv_results_["verified"][s.best_index_]
    exact = cv_score(SVM(fit_intercept=False, **s.best_params_), X, y, s.folds_,
                     method="exact")
    assert s.best_cv_error_ == pytest.approx(exact)
    assert s.best_params_["sigma"] == 1.0  # the corner's exact CV error is the class share


def test_unverified_fbif_warns_for_a_regression_winner_whose_criterion_is_round_off():
    """A square-loss criterion of ~1e-9 at the interpolating corner sits just above its
    training error: it is the same collapse, and the search says so."""
    from fastgssl import OptimisticCriterionWarning
    from fastgssl.models import LapRLS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 8))
    y = X[:, 0] + 0.3 * rng.normal(size=120)
    y_semi = y.copy()
    y_semi[rng.permutation(120)[20:]] = np.nan
    grid = {"sigma": [2.0**-10, 4.0, 64.0], "gamma_a": [1e-6, 1e-2], "gamma_i": [1e-6, 1.0]}
    with pytest.warns(OptimisticCriterionWarning, match="training error"):
        s = GridSearchCV(LapRLS(task="regression", n_neighbors=8, sigma_w=16.0), grid,
                               cv=5, method="fbif", verify=None, random_state=0).fit(X, y_semi)
    assert s.best_cv_error_ < 1e-6  # the collapsed criterion the warning is about


def test_former_name_is_an_alias_with_the_same_results():
    """ApproxGridSearchCV: the search's former name, the same estimator and results, and a
    DeprecationWarning naming GridSearchCV with the method to pass."""
    X, y = regression_data(40)
    grid = {"sigma": [1.0, 3.0], "lam": [1e-3, 1e-1]}
    with pytest.warns(DeprecationWarning,
                      match=r"renamed GridSearchCV.*GridSearchCV\(estimator, param_grid, "
                            r"method='exact-quadratic'"):
        old = ApproxGridSearchCV(KRR(), grid, cv=4, method="exact-quadratic",
                                 random_state=0).fit(X, y)
    new = GridSearchCV(KRR(), grid, cv=4, method="exact-quadratic", random_state=0).fit(X, y)
    assert issubclass(ApproxGridSearchCV, GridSearchCV)
    assert old.method_ == new.method_ and old.best_params_ == new.best_params_
    assert np.array_equal(old.cv_results_["mean_cv_error"], new.cv_results_["mean_cv_error"])


@pytest.mark.parametrize("est, grid, semi", [(KRR(), {"lam": [1e-3, 1e-1]}, False),
                                             (LapRLS(n_neighbors=5), {"gamma_a": [1e-3, 1e-1]},
                                              True)], ids=["KRR", "LapRLS"])
def test_search_keeps_the_column_names_of_a_dataframe(est, grid, semi):
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import make_classification

    X, y = make_classification(60, 4, random_state=0)
    if semi:
        y[20:] = -1
    df = pd.DataFrame(X, columns=list("abcd"))
    search = GridSearchCV(est, grid, cv=3, random_state=0).fit(df, y)
    assert list(search.feature_names_in_) == list("abcd") and search.n_features_in_ == 4
    assert list(search.best_estimator_.feature_names_in_) == list("abcd")
    np.testing.assert_array_equal(search.predict(df), search.best_estimator_.predict(X))
    with pytest.raises(ValueError, match="feature names"):
        search.predict(df[list("dcba")])  # reordered columns used to give other predictions


def test_a_plugin_method_declaring_its_group_path_reaches_the_shared_work():
    """A CVMethod subclass that is not a registered built-in gets the search's shared group
    work through the path it declares (``CVMethod.group_path``), not through its name: the
    search fits each candidate once on the group's kernel and calls ``run_fitted``; it never
    falls back to the per-candidate ``run``. The results are the built-in method's."""
    from fastgssl.cv import BIFMethod, ExactMethod
    from fastgssl.models import PoissonLearning

    calls = []

    class CountingBIF(BIFMethod):
        name = "counting-bif"

        def run(self, *args, **kwargs):
            raise AssertionError("per-candidate run: the shared group work was not reached")

        def run_fitted(self, fitted, folds, n_folds, times=None, **kw):
            calls.append(type(fitted).__name__)
            return super().run_fitted(fitted, folds, n_folds, times=times, **kw)

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, 0)
    grid = {"sigma": [0.5, 4.0], "lam": [1e-3, 1e-1]}
    folds = make_folds(y, 4, random_state=0)
    plugin = GridSearchCV(SVM(), grid, cv=folds, method=CountingBIF(), refit=False).fit(X, y)
    builtin = GridSearchCV(SVM(), grid, cv=folds, method="bif", refit=False).fit(X, y)
    assert calls == ["SVM"] * 4 and plugin.method_ == "counting-bif"
    assert np.array_equal(plugin.cv_results_["mean_cv_error"],
                          builtin.cv_results_["mean_cv_error"])

    class PluginExact(ExactMethod):  # exact refits: the shared graph of a graph learner
        name = "plugin-exact"

        def run(self, *args, **kwargs):
            raise AssertionError("per-candidate run: the shared group work was not reached")

    Xg = rng.normal(size=(80, 2))
    yg = np.where(Xg[:, 0] > 0, 1, 0)
    yg[rng.permutation(80)[:50]] = -1
    grid = {"n_neighbors": [5, 8]}
    a = GridSearchCV(PoissonLearning(), grid, cv=3, method=PluginExact(), random_state=0,
                     refit=False).fit(Xg, yg)
    b = GridSearchCV(PoissonLearning(), grid, cv=3, method="exact", random_state=0,
                     refit=False).fit(Xg, yg)
    assert np.array_equal(a.cv_results_["mean_cv_error"], b.cv_results_["mean_cv_error"])


def test_strategies_read_a_frozen_plan_and_a_cache_never_the_search(monkeypatch):
    """Every group is evaluated from the search's frozen plan and the grid's cache; the
    strategy is chosen from the plan (the method's declared group path)."""
    import dataclasses

    import fastgssl.cv._grid_groups as groups
    from fastgssl.cv._plan import GroupCache, SearchPlan

    seen = []
    evaluate = groups.evaluate_group

    def spy(*args, **kwargs):
        assert not kwargs and len(args) == 3
        plan, group, cache = args
        assert isinstance(plan, SearchPlan) and isinstance(cache, GroupCache)
        seen.append(type(groups.strategy_for(plan)).__name__)
        with pytest.raises(dataclasses.FrozenInstanceError):
            plan.protocol = "inductive"
        return evaluate(plan, group, cache)

    monkeypatch.setattr("fastgssl.cv._search.evaluate_group", spy)
    X, y = regression_data()
    grid = {"sigma": [0.5, 2.0], "lam": [1e-3, 1e-1]}
    GridSearchCV(KRR(), grid, cv=4, method="bif", random_state=0).fit(X, y)
    GridSearchCV(KRR(), grid, cv=4, method="exact", protocol="inductive",
                 random_state=0).fit(X, y)
    y_semi = np.where(np.arange(60) % 3 == 0, y, np.nan)
    GridSearchCV(LapRLS(task="regression", sigma=1.0), {"gamma_i": [0.1, 1.0]}, cv=4,
                 random_state=0).fit(X, y_semi)
    assert seen == ["OneFitGroup"] * 4 + ["TransductiveGroup"]


@pytest.mark.parametrize("method", ["bif", "fbif", "newton", "exact-quadratic", "exact"])
@pytest.mark.parametrize("semi", [True, False])
def test_a_group_with_and_without_a_graph_term_equals_each_candidate_alone(method, semi):
    """``gamma_i = 0`` beside ``gamma_i > 0`` in one group (one kernel, one graph): every
    candidate's criterion equals :func:`cv_result` of that candidate alone, whichever
    value comes first in the grid. Every point labeled, the square loss's closed forms (no
    graph) apply to the ``gamma_i = 0`` candidate only; semi-supervised, the first
    candidate without a graph term does not decide that the group has none."""
    X, y = regression_data(60)
    if semi:
        y = np.where(np.arange(60) % 2 == 0, y, np.nan)
    est = LapRLS(sigma=1.0, n_neighbors=6, task="regression", gamma_a=1e-2)
    for values in ([0.0, 10.0], [10.0, 0.0]):
        search = GridSearchCV(est, {"gamma_i": values}, cv=4, method=method,
                              n_components=20, random_state=0).fit(X, y)
        for i, params in enumerate(search.cv_results_["params"]):
            opts = {"n_components": 20} if method == "fbif" else {}
            ref = cv_result(clone(est).set_params(**params), X, y, search.folds_, method=method,
                            random_state=0, **opts)
            assert search.cv_results_["mean_cv_error"][i] == pytest.approx(ref.score,
                                                                          rel=1e-9)
