"""The CV protocol: a learner and a CV method written only against the documented seams.

* learner side: ``fit``, ``decision_function``, ``get_params`` / ``set_params`` and
  ``cv_state()`` returning a :class:`fastgssl.CVState`;
* method side: a :class:`fastgssl.cv.CVMethod` registered in the ``fastgssl.cv`` group (the
  example plugin distribution ``fastgssl-pseudohuber`` ships ``hidden-label-refits``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_blobs, make_moons

from fastgssl import CVObjective, CVState, RefitPart
from fastgssl.cv import CVMethod, GridSearchCV, cv_result, cv_score, make_folds
from fastgssl.models import LabelPropagation, LapRLS, LapSVM


class MeanFormKernelRidgeClassifier(ClassifierMixin, BaseEstimator):
    """A third-party learner: kernel ridge on +-1 targets, papers' mean form
    ``(1/n) sum (y - f)^2 + lam ||f||^2``, implementing only the documented protocol."""

    def __init__(self, lam=1e-2, gamma=1.0):
        self.lam = lam
        self.gamma = gamma

    def _kernel(self, A, B):
        d2 = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2 * A @ B.T
        return np.exp(-self.gamma * np.clip(d2, 0, None))

    def fit(self, X, y, init_coef=None):
        from fastgssl.losses import get_loss

        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        self.y_enc_ = np.where(y == self.classes_[1], 1.0, -1.0)
        self.X_ = X
        K = self._kernel(X, X)
        n = len(y)
        self.alpha_ = sla.solve(K + n * self.lam * np.eye(n), self.y_enc_, assume_a="pos")
        self.K_ = K
        self.f_ = K @ self.alpha_
        self.loss_ = get_loss("square")
        return self

    def decision_function(self, X):
        return self._kernel(np.asarray(X, dtype=float), self.X_) @ self.alpha_

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def cv_state(self):
        n = len(self.y_enc_)
        return CVState(task="classification", y=self.y_enc_, labeled=np.ones(n, dtype=bool),
                       f=self.f_, classes=self.classes_, gamma_a=self.lam, loss=self.loss_,
                       kernel=self.K_, coef=self.alpha_, estimator=self,
                       refit_part=RefitPart(solve=self._solve))

    def _solve(self, K, Y, init=None, return_info=False):
        beta = sla.solve(K + K.shape[0] * self.lam * np.eye(K.shape[0]), Y, assume_a="pos")
        return (beta, [{"n_iter": 1}]) if return_info else beta

    def cv_objective(self, y):
        from fastgssl.losses import get_loss

        if not self.lam > 0:
            raise ValueError(f"lam must be > 0, got {self.lam!r}.")
        y = np.asarray(y)
        classes = np.unique(y)
        return CVObjective(task="classification", y=np.where(y == classes[1], 1.0, -1.0),
                           labeled=np.ones(len(y), dtype=bool), classes=classes,
                           gamma_a=self.lam, loss=get_loss("square"),
                           refit_part=RefitPart(solve=self._solve))


class StateOnlyKernelRidgeClassifier(MeanFormKernelRidgeClassifier):
    """The same learner implementing ``cv_state`` but not ``cv_objective``."""

    cv_objective = None


def _data(n=80, seed=0):
    X, y = make_moons(n, noise=0.25, random_state=seed)
    return X, y


def _brute_mean_form(est, X, y, folds):
    lab = np.arange(len(y))
    pred = np.empty(len(y))
    for i in np.unique(folds):
        tr, va = lab[folds != i], lab[folds == i]
        pred[va] = clone(est).fit(X[tr], y[tr]).decision_function(X[va])
    return pred


@pytest.mark.parametrize("method, protocol", [("exact", "transductive"),
                                              ("exact", "inductive"),
                                              ("newton", None)])
def test_third_party_learner_exact_methods_equal_brute_force(method, protocol):
    X, y = _data()
    folds = make_folds(y, 4, random_state=0)
    est = MeanFormKernelRidgeClassifier(lam=1e-2, gamma=2.0)
    res = cv_result(est, X, y, folds, method=method, protocol=protocol)
    ref = _brute_mean_form(est, X, y, folds)
    assert np.abs(res.predictions - ref).max() < 1e-9


@pytest.mark.parametrize("method", ["bif", "fbif", "exact-quadratic"])
def test_third_party_learner_one_fit_methods_run(method):
    X, y = _data()
    res = cv_result(MeanFormKernelRidgeClassifier(), X, y, 4, method=method, random_state=0)
    assert res.predictions.shape == (len(y),) and 0.0 <= res.score <= 1.0


@pytest.mark.parametrize("learner", [MeanFormKernelRidgeClassifier,
                                     StateOnlyKernelRidgeClassifier])
def test_third_party_learner_in_the_search(learner):
    X, y = _data()
    grid = {"lam": [1e-3, 1e-1], "gamma": [0.5, 2.0]}
    s = GridSearchCV(learner(), grid, cv=4, random_state=0).fit(X, y)
    assert s.method_ == "exact"
    for i, params in enumerate(s.cv_results_["params"]):
        ref = _brute_mean_form(learner(**params), X, y, s.folds_)
        err = np.mean(np.sign(ref) != np.where(y == 1, 1.0, -1.0))
        assert s.cv_results_["mean_cv_error"][i] == pytest.approx(err, abs=1e-12)


def test_third_party_objective_validates_each_candidate_before_work():
    X, y = _data()
    with pytest.raises(ValueError, match="lam must be > 0"):
        GridSearchCV(MeanFormKernelRidgeClassifier(), {"lam": [1e-2, -1.0]}, cv=4,
                           random_state=0).fit(X, y)


def test_method_object_written_against_the_base_class():
    class Holdout(CVMethod):
        """Exact transductive CV of the first fold only (a method object, not a plugin)."""

        name = "first-fold"
        protocols = ("transductive",)
        is_exact = True

        def run(self, estimator, X, y, folds, *, protocol=None):
            self.check_protocol(protocol)
            from fastgssl.cv import ExactCV

            return ExactCV().run(estimator, X, y, folds, protocol="transductive")

    X, y = _data()
    assert cv_score(MeanFormKernelRidgeClassifier(), X, y, 4, method=Holdout(),
                    random_state=0) >= 0.0
    with pytest.raises(ValueError, match="not 'inductive'"):
        cv_score(MeanFormKernelRidgeClassifier(), X, y, 4, method=Holdout(),
                 protocol="inductive", random_state=0)


def _plugin_installed():
    """The example plugin distribution is installed (CI installs it). Whether its CV method
    then loads is what the tests check: an installed plugin that fails to register fails
    them instead of skipping."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution("fastgssl-pseudohuber")
    except PackageNotFoundError:
        return False
    return True


plugin = pytest.mark.skipif(not _plugin_installed(),
                            reason="the example plugin distribution fastgssl-pseudohuber "
                                   "(plugins/) is not installed")


def _semi(n=100, n_lab=20, seed=1):
    X, y = make_moons(n, noise=0.2, random_state=seed)
    rng = np.random.default_rng(seed)
    y_semi = np.full(n, -1)
    lab = np.r_[rng.choice(np.flatnonzero(y == 0), n_lab // 2, replace=False),
                rng.choice(np.flatnonzero(y == 1), n_lab // 2, replace=False)]
    y_semi[lab] = y[lab]
    return X, y_semi


@plugin
@pytest.mark.parametrize("est", [LapSVM(sigma=0.5, gamma_a=1e-3, gamma_i=1.0, n_neighbors=6),
                                 LapRLS(sigma=0.5, gamma_i=1.0, n_neighbors=6,
                                        task="classification"),
                                 LabelPropagation(n_neighbors=6)],
                         ids=["lapsvm", "laprls", "labelprop"])
def test_cv_plugin_equals_the_one_fit_transductive_cv(est):
    X, y_semi = _semi()
    folds = make_folds(y_semi, 4, random_state=0)
    plug = cv_result(est, X, y_semi, folds, method="hidden-label-refits")
    fast = cv_result(est, X, y_semi, folds, method="exact", protocol="transductive")
    assert plug.protocol == fast.protocol == "transductive"
    if isinstance(est, LabelPropagation):
        assert np.array_equal(np.argmax(plug.predictions, 1), np.argmax(fast.predictions, 1))
    else:
        assert np.abs(plug.predictions - fast.predictions).max() < 1e-9
    assert plug.score == pytest.approx(fast.score)


@plugin
def test_cv_plugin_inside_the_search():
    X, y_semi = _semi()
    grid = {"gamma_i": [0.1, 1.0], "gamma_a": [1e-3, 1e-1]}
    est = LapSVM(sigma=0.5, n_neighbors=6)
    a = GridSearchCV(est, grid, cv=4, method="hidden-label-refits",
                           random_state=0).fit(X, y_semi)
    b = GridSearchCV(est, grid, cv=4, random_state=0).fit(X, y_semi)
    assert a.protocol_ == b.protocol_ == "transductive"
    assert np.allclose(a.cv_results_["mean_cv_error"], b.cv_results_["mean_cv_error"],
                       atol=1e-12)
    with pytest.raises(ValueError, match="not 'inductive'"):
        GridSearchCV(est, grid, cv=4, method="hidden-label-refits",
                           protocol="inductive").fit(X, y_semi)


@pytest.mark.parametrize("scoring", ["balanced_accuracy", "roc_auc", "f1"])
def test_search_with_scikit_learn_scorers(scoring):
    from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

    metric = {"balanced_accuracy": balanced_accuracy_score, "roc_auc": roc_auc_score,
              "f1": f1_score}[scoring]
    X, y_semi = _semi()
    grid = {"gamma_i": [0.01, 1.0], "sigma": [0.3, 1.0]}
    s = GridSearchCV(LapSVM(n_neighbors=6), grid, cv=4, scoring=scoring,
                           random_state=0).fit(X, y_semi)
    lab = np.flatnonzero(y_semi != -1)
    for i, params in enumerate(s.cv_results_["params"]):
        res = cv_result(LapSVM(n_neighbors=6, **params), X, y_semi, s.folds_)
        per_fold = []
        for k in range(4):
            rows = np.flatnonzero(res.folds[lab] == k)
            dec = res.predictions[rows]
            per_fold.append(metric(y_semi[lab][rows],
                                   dec if scoring == "roc_auc" else (dec > 0).astype(int)))
        assert s.cv_results_["mean_test_score"][i] == pytest.approx(np.mean(per_fold))
    assert s.best_index_ == int(np.argmax(s.cv_results_["mean_test_score"]))


def test_search_with_a_callable_scorer_and_bad_scoring():
    X, y_semi = _semi()
    calls = []

    def scorer(est, rows, y_true):
        calls.append(len(y_true))
        return float(np.mean(est.predict(rows) == y_true))

    s = GridSearchCV(LapSVM(n_neighbors=6), {"gamma_i": [0.1, 1.0]}, cv=4,
                           scoring=scorer, random_state=0).fit(X, y_semi)
    assert len(calls) == 8
    assert np.allclose(s.cv_results_["mean_test_score"], 1 - s.cv_results_["mean_cv_error"])
    with pytest.raises(ValueError, match="scoring must be"):
        GridSearchCV(LapSVM(), {"gamma_i": [0.1]}, cv=4, scoring="nope").fit(X, y_semi)


def test_supervised_pipeline_in_the_search_equals_gridsearchcv():
    """An estimator without the protocol is scored by refits: with every point labeled,
    exactly scikit-learn's GridSearchCV on the same folds (error = 1 - accuracy)."""
    from sklearn.model_selection import GridSearchCV as SklearnGridSearchCV
    from sklearn.model_selection import PredefinedSplit
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    X, y = _data(n=120)
    pipe = make_pipeline(StandardScaler(), SVC())
    grid = {"svc__C": [0.1, 10.0]}
    ours = GridSearchCV(pipe, grid, cv=4, random_state=0).fit(X, y)
    ref = SklearnGridSearchCV(pipe, grid, cv=PredefinedSplit(ours.folds_)).fit(X, y)
    assert ours.method_ == "exact"
    assert np.allclose(ours.cv_results_["mean_cv_error"], 1 - ref.cv_results_["mean_test_score"],
                       atol=1e-12)
    assert ours.best_params_ == ref.best_params_


class DeclaredKernelRidgeClassifier(MeanFormKernelRidgeClassifier):
    """The same learner declaring what a grid search may share (``CVObjective.kernel_key``,
    ``build_kernel``, ``estimator_for``), with parameter names of its own (``gamma``, not
    fastgssl's ``sigma``) and a precomputed mode the search may hand its Gram matrix to."""

    builds = 0

    def __init__(self, lam=1e-2, gamma=1.0, gram_given=False):
        super().__init__(lam=lam, gamma=gamma)
        self.gram_given = gram_given

    def _gram(self, X):
        type(self).builds += 1
        X = np.asarray(X, dtype=float)
        return self._kernel(X, X)

    def fit(self, X, y, init_coef=None):
        if not self.gram_given:
            return super().fit(X, y)
        K = np.asarray(X, dtype=float)
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        self.y_enc_ = np.where(y == self.classes_[1], 1.0, -1.0)
        n = len(y)
        self.alpha_ = sla.solve(K + n * self.lam * np.eye(n), self.y_enc_, assume_a="pos")
        self.K_, self.f_ = K, K @ self.alpha_
        from fastgssl.losses import get_loss

        self.loss_ = get_loss("square")
        return self

    def decision_function(self, X):
        if self.gram_given:
            return np.asarray(X, dtype=float) @ self.alpha_
        return super().decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.gram_given
        return tags

    def cv_objective(self, y):
        from dataclasses import replace

        return replace(super().cv_objective(y), kernel_key=(self.gamma,),
                       build_kernel=self._gram, precomputed=self.gram_given,
                       estimator_for=self._estimator_for)

    def _estimator_for(self, gram=False, graph=None, warm=None):
        return clone(self).set_params(gram_given=True) if gram else clone(self)


@pytest.mark.parametrize("method", ["exact", "exact-quadratic", "bif"])
def test_third_party_learner_declaring_its_kernel_gets_the_shared_work(method):
    """One Gram matrix per kernel key, whatever the learner calls its parameters, and the
    same CV errors as the learner that declares nothing (exact: brute-force refits)."""
    X, y = _data()
    grid = {"lam": [1e-3, 1e-2, 1e-1], "gamma": [0.5, 2.0]}
    DeclaredKernelRidgeClassifier.builds = 0
    shared = GridSearchCV(DeclaredKernelRidgeClassifier(), grid, cv=4, method=method,
                                random_state=0).fit(X, y)
    assert DeclaredKernelRidgeClassifier.builds == 2  # one per gamma, not one per candidate
    plain = GridSearchCV(MeanFormKernelRidgeClassifier(), grid, cv=4, method=method,
                               random_state=0).fit(X, y)
    assert np.allclose(shared.cv_results_["mean_cv_error"], plain.cv_results_["mean_cv_error"],
                       rtol=0, atol=1e-12)
    if method == "exact":
        for i, params in enumerate(shared.cv_results_["params"]):
            ref = _brute_mean_form(MeanFormKernelRidgeClassifier(**params), X, y, shared.folds_)
            err = np.mean(np.sign(ref) != np.where(y == 1, 1.0, -1.0))
            assert shared.cv_results_["mean_cv_error"][i] == pytest.approx(err, abs=1e-12)


def test_the_deformed_coefficients_are_a_typed_field_and_the_old_channel_warns():
    """``CVState.deformed_coef`` carries the warm start of the transductive refits; a
    third-party learner still passing ``extra={"deformed_coef": ...}`` keeps working with a
    DeprecationWarning, and fastgssl's own learners no longer use that channel."""
    import warnings

    X, y = _data(60)
    y_semi = np.where(np.arange(60) % 3 == 0, y, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        state = LapSVM(gamma_i=0.1).fit(X, y_semi).cv_state()
    assert "deformed_coef" not in state.extra
    assert state.deformed_coef is not None and state.deformed_coef.shape[0] == 20
    beta = np.arange(3.0)
    with pytest.warns(DeprecationWarning, match="deformed_coef"):
        old = CVState(task="regression", y=np.zeros(3), labeled=np.ones(3, dtype=bool),
                      f=np.zeros(3), extra={"deformed_coef": beta, "other": 1})
    assert old.deformed_coef is beta and old.extra == {"other": 1}


def test_sharing_declarations_are_two_typed_parts_and_flat_fields_still_work():
    """A learner declares its kernel and its graph as one part each (``KernelPart``,
    ``GraphPart``); fastgssl's learners do so without any warning, and the flat fields
    read the parts. A third-party learner passing the former flat fields (to the
    constructor, to ``dataclasses.replace`` or by assignment) gets the same objective with
    a DeprecationWarning."""
    import dataclasses
    import warnings

    from fastgssl import GraphPart, KernelPart
    from fastgssl.models import KRR, PoissonLearning

    X, y = _data(60)
    y_semi = np.where(np.arange(60) % 3 == 0, y, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        lap = LapSVM(gamma_i=0.1).cv_objective(y_semi)
        krr = KRR().cv_objective(y)
        poisson = PoissonLearning(n_neighbors=7).cv_objective(y_semi)
        copy = dataclasses.replace(lap, gamma_a=1.0)  # a replace keeps the parts
    assert isinstance(lap.kernel_part, KernelPart) and isinstance(lap.graph_part, GraphPart)
    assert lap.kernel_key == lap.kernel_part.key and lap.graph_key == lap.graph_part.key
    assert lap.build_graph == lap.graph_part.build_graph and lap.knn_k == 10
    assert copy.kernel_part is lap.kernel_part and copy.graph_part is lap.graph_part
    assert krr.graph_part is None and krr.graph_key is None and krr.shares_kernel
    assert poisson.kernel_part is None and poisson.knn_k == 7 and poisson.uses_graph

    base = dict(task="classification", y=np.zeros(3), labeled=np.ones(3, dtype=bool))
    with pytest.warns(DeprecationWarning, match="build_kernel, kernel_key"):
        flat = CVObjective(**base, kernel_key=("k",), build_kernel=len)
    assert flat.kernel_part == KernelPart(key=("k",), build_kernel=len)
    assert flat.shares_kernel and flat.graph_part is None
    with pytest.warns(DeprecationWarning, match="graph_key"):
        moved = dataclasses.replace(flat, graph_key=("g",))
    assert moved.graph_part == GraphPart(key=("g",)) and moved.kernel_part == flat.kernel_part
    with pytest.warns(DeprecationWarning, match="kernel_key"):
        moved.kernel_key = ("k2",)
    assert moved.kernel_part.key == ("k2",) and moved.kernel_part.build_kernel is len


class FlatRefitKernelRidgeClassifier(MeanFormKernelRidgeClassifier):
    """The same learner written against the former protocol: ``solve`` passed as a flat
    field of its state and objective instead of a :class:`fastgssl.RefitPart`."""

    def cv_state(self):
        state = super().cv_state()
        return CVState(task=state.task, y=state.y, labeled=state.labeled, f=state.f,
                       classes=state.classes, gamma_a=state.gamma_a, loss=state.loss,
                       kernel=state.kernel, coef=state.coef, estimator=self,
                       solve=self._solve)

    def cv_objective(self, y):
        import dataclasses

        return dataclasses.replace(super().cv_objective(y), refit_part=None,
                                   solve=self._solve)


@pytest.mark.parametrize("method", ["exact", "newton"])
def test_fold_refits_declared_flat_still_work_with_a_deprecation_warning(method):
    """A third-party learner passing the former flat ``solve=`` gets the same CV values as
    the one declaring ``refit_part=RefitPart(solve=...)`` (bit for bit), and a
    DeprecationWarning naming the part; exact CV equals brute-force refits."""
    X, y = _data()
    folds = make_folds(y, 4, random_state=0)
    new = cv_result(MeanFormKernelRidgeClassifier(lam=1e-2, gamma=2.0), X, y, folds,
                    method=method, protocol="transductive" if method == "exact" else None)
    with pytest.warns(DeprecationWarning, match="refit_part=fastgssl.RefitPart"):
        old = cv_result(FlatRefitKernelRidgeClassifier(lam=1e-2, gamma=2.0), X, y, folds,
                        method=method,
                        protocol="transductive" if method == "exact" else None)
    assert np.array_equal(old.predictions, new.predictions)
    ref = _brute_mean_form(MeanFormKernelRidgeClassifier(lam=1e-2, gamma=2.0), X, y, folds)
    assert np.abs(new.predictions - ref).max() < 1e-9
    with pytest.warns(DeprecationWarning, match="solve"):
        grid = {"lam": [1e-3, 1e-1]}
        flat = GridSearchCV(FlatRefitKernelRidgeClassifier(), grid, cv=folds,
                                  method="exact").fit(X, y)
    part = GridSearchCV(MeanFormKernelRidgeClassifier(), grid, cv=folds,
                              method="exact").fit(X, y)
    assert np.array_equal(flat.cv_results_["mean_cv_error"], part.cv_results_["mean_cv_error"])


def test_fold_refits_are_one_typed_part_of_state_and_objective():
    """The kernel machines declare their fold refits (``solve``, ``solve_folds``,
    ``decode``, ``weights_for``) and label propagation its ``relabel`` as one
    :class:`fastgssl.RefitPart` of the objective and of the state, without any
    DeprecationWarning; the flat names read the part, and passing, replacing or setting
    them still works with a DeprecationWarning."""
    import dataclasses
    import warnings

    from fastgssl.models import SVM

    X, y3 = make_blobs(90, centers=3, cluster_std=1.5, random_state=0)
    y_semi = np.where(np.arange(len(y3)) % 3 == 0, y3, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        ovo = LapSVM(gamma_i=0.1, multi_class="ovo", class_weight="balanced")
        objective = ovo.cv_objective(y_semi)
        state = ovo.fit(X, y_semi).cv_state()
        hinge = SVM().cv_objective(np.where(y3 == 0, 1, 0))  # the Huber hinge
        binary = np.where(y_semi == -1, -1, (y_semi == 0).astype(int))
        plain = LapRLS(gamma_i=0.1).fit(X, binary).cv_state()
        prop = LabelPropagation(n_neighbors=7).fit(X, y_semi).cv_state()
    for part in (objective.refit_part, state.refit_part):
        assert isinstance(part, RefitPart) and part.relabel is None
        assert part.solve is not None and part.decode is not None
        assert part.weights_for is not None and part.solve_folds is None  # one-vs-one
    assert state.solve is state.refit_part.solve
    assert objective.decode is objective.refit_part.decode
    assert state.sample_weight is not None and "solve" not in state.extra
    # one-vs-one codes 3 classes in 3 pairs: decode maps pair values to one column per class
    assert state.decode(np.zeros((2, 3))).shape == (2, 3)
    assert hinge.solve_folds is not None and hinge.weights_for is None and hinge.decode is None
    assert plain.refit_part.weights_for is None and plain.refit_part.decode is None
    assert prop.refit_part == RefitPart(relabel=prop.relabel) and prop.solve is None
    assert prop.propagation is not None

    base = dict(task="regression", y=np.zeros(3), labeled=np.ones(3, dtype=bool),
                f=np.zeros(3))
    with pytest.warns(DeprecationWarning, match="decode, solve as flat CVState"):
        flat = CVState(**base, solve=len, decode=abs)
    assert flat.refit_part == RefitPart(solve=len, decode=abs)
    with pytest.warns(DeprecationWarning, match="relabel"):
        moved = dataclasses.replace(flat, relabel=min)
    assert moved.refit_part == RefitPart(solve=len, decode=abs, relabel=min)
    with pytest.warns(DeprecationWarning, match="weights_for"):
        moved.weights_for = max
    assert moved.refit_part.weights_for is max and moved.refit_part.solve is len
    with pytest.warns(DeprecationWarning, match="solve_folds as flat CVObjective"):
        obj = CVObjective(task="regression", y=np.zeros(3), labeled=np.ones(3, dtype=bool),
                          solve_folds=len)
    assert obj.refit_part == RefitPart(solve_folds=len) and obj.solve is None
    empty = CVObjective(task="regression", y=np.zeros(3), labeled=np.ones(3, dtype=bool))
    assert empty.refit_part is None and empty.solve is None and empty.decode is None
