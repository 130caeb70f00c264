"""The shared machinery of the graph-propagation estimators.

:class:`_GraphPropagation` holds what label propagation, local and global consistency and
Poisson learning have in common: the parameter checks, the graph (built by a registered
builder, given, or precomputed) and the kernel of its induction formula, the fit on the
components that hold a label (full system or subset ensemble, :mod:`._propagation_systems`),
the policy for components without labels, and the induction formula at new points
(:mod:`._induction`). Its cross-validation protocol is :class:`._propagation_cv._PropagationCV`.
:class:`_PropagationClassifier` adds the class decision (distributions, labels, the
class-share check).
"""

from __future__ import annotations

import inspect
import logging
import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from fastgssl._components import component_labels
from fastgssl._sparse_blocks import principal_submatrix
from fastgssl._threads import thread_count
from fastgssl._validation import (
    check_n_jobs,
    check_n_neighbors,
    check_random_state,
    check_semi_supervised_y,
    check_X,
)
from fastgssl.exceptions import UnlabeledComponentWarning
from fastgssl.graphs import knn_search, resolve_graph, resolve_graph_value
from fastgssl.graphs.internal import (
    DEFAULT_SELF_TUNED_CONSTANT,
    SELF_TUNED,
    SYMMETRIZE,
    WEIGHTS,
    check_self_tuned_constant,
)
from fastgssl.models._balance import check_class_shares, class_mass_normalize
from fastgssl.models._induction import induction_operator, kernel_weights, needs_scale
from fastgssl.models._propagation_cv import _PropagationCV
from fastgssl.models._propagation_systems import (
    _solve_lgc_full,
    _solve_ss_full,
    _solve_subset,
    _sub,
    gaussian_sigma_from_edges,
)
from fastgssl.models._scoring import labeled_score

POLICIES = ("auto", "abstain", "uniform", "nearest")
# the fit's stages (graph, propagation) at INFO: off unless the application turns the level
# on, e.g. logging.basicConfig(level=logging.INFO) or `fastgssl label -v`
logger = logging.getLogger("fastgssl")


def _graph_name(graph):
    if isinstance(graph, str):
        return repr(graph)
    return type(graph).__name__ if not sp.issparse(graph) else "given"


def _log_graph(est, W, seconds):
    """One INFO line on the graph just built: size, edges, time, recall and threads."""
    if not logger.isEnabledFor(logging.INFO):
        return
    recall = getattr(est, "graph_recall_", None)
    logger.info("%s: graph of %s points, %s edges in %.1f s on %d thread(s)%s",
                type(est).__name__, f"{W.shape[0]:,}", f"{W.nnz // 2:,}", seconds,
                est.n_threads_, "" if recall is None else f", recall {recall:.3f}")


class _GraphPropagation(_PropagationCV, BaseEstimator):
    """Shared machinery: graph, solve (full or subsets), component policy, induction."""

    _criterion = "ss"  # "ss" or "lgc"
    _task = "classification"
    # scikit-learn's parameter constraints (BaseEstimator._validate_params at fit); checks
    # that involve several parameters stay in _check_common_params
    _parameter_constraints = {
        "graph": [str, callable, "sparse matrix", np.ndarray],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "graph_weight": [StrOptions(set(WEIGHTS))],
        "graph_symmetrize": [StrOptions(set(SYMMETRIZE)), None],
        "sigma_w": [Interval(Real, 0, None, closed="neither"), None],
        "self_tuned_constant": [Interval(Real, 0, None, closed="neither")],
        "n_landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "drop_rr": ["boolean"],
        "n_subsets": [Interval(Integral, 1, None, closed="left")],
        "unlabeled_policy": [StrOptions(set(POLICIES))],
        "class_mass_normalization": ["boolean"],
        "solver": [StrOptions({"auto", "amg", "cg", "direct"})],
        "rtol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    # -- parameters ----------------------------------------------------------------------

    def _check_common_params(self):
        self._validate_params()
        if self.unlabeled_policy not in self._policies():
            raise ValueError(
                f"unlabeled_policy must be one of {list(self._policies())}, got "
                f"{self.unlabeled_policy!r}."
            )
        if getattr(self, "n_landmarks", None) is None and getattr(self, "n_subsets", 1) != 1:
            raise ValueError(
                f"n_subsets={self.n_subsets} needs n_landmarks (the subset size m); the full "
                f"solve (n_landmarks=None) has no subsets."
            )
        if self._precomputed() and self.unlabeled_policy == "nearest":
            raise ValueError(
                "unlabeled_policy='nearest' measures distances between points, but "
                "graph='precomputed' gives no coordinates; use 'abstain' or 'uniform', or pass "
                "the affinity as graph=W together with the coordinates X."
            )
        if self.sigma_w is not None and self.graph_weight in SELF_TUNED:
            raise ValueError(
                f"sigma_w={self.sigma_w!r} is the bandwidth of graph_weight='gaussian', but "
                f"graph_weight={self.graph_weight!r} scales each point by the distance to its "
                f"k-th neighbour; pass graph_weight='gaussian' with sigma_w, or leave sigma_w "
                f"None."
            )
        check_self_tuned_constant(
            self.self_tuned_constant, self.graph_weight, weight_name="graph_weight",
            default=inspect.signature(type(self).__init__).parameters[
                "self_tuned_constant"].default)

    def _policies(self):
        return POLICIES

    def _policy(self):
        """The policy in force: ``"auto"`` is ``"nearest"`` where the points have
        coordinates, ``"uniform"`` on ``graph="precomputed"`` (no coordinates)."""
        if self.unlabeled_policy != "auto":
            return self.unlabeled_policy
        return "uniform" if self._precomputed() else "nearest"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self._precomputed()
        tags.target_tags.required = True
        return tags

    def _precomputed(self):
        return isinstance(self.graph, str) and self.graph == "precomputed"

    # -- graph -----------------------------------------------------------------------------

    def _build_graph(self, X):
        """Return (W, coordinates or None, (weight, sigma, scale, symmetrize, constant) of
        the induction kernel).

        The kernel is the graph's (:class:`fastgssl.graphs.Graph`, from
        :func:`fastgssl.graphs.resolve_graph_value`): a builder object's weight and its
        parameters as used, else the learner's own. ``scale`` is ``d_k(x_i)^2`` of the
        training points when the kernel needs it (the self-tuned weights, a symmetrization
        other than ``"max"``): the graph's when its builder measured them, else None (an
        exact k-nearest-neighbour search at first use, :meth:`_induction_scale`).
        ``symmetrize`` None stands for the weight's own, which the induction kernel
        resolves (:func:`._induction.kernel_weights`, :func:`._induction.needs_scale`).
        """
        graph = self.graph
        weight = self.graph_weight
        how = self.graph_symmetrize
        n = X.shape[0]
        constant = float(self.self_tuned_constant)
        params = {
            "n_neighbors": self.n_neighbors,
            "weight": self.graph_weight,
            "sigma_w": self.sigma_w,
            "symmetrize": how,
            "n_jobs": self.n_jobs,
            # offered with the self-tuned weights only (the builders refuse it elsewhere)
            "self_tuned_constant": constant if weight in SELF_TUNED else None,
        }
        coords = X
        if isinstance(graph, str) and graph == "precomputed":
            self.graph_recall_ = None
            W = resolve_graph(X, None, n_samples=n, name="X (graph='precomputed')")
            return W, None, (weight, None, None, how, constant)
        own = inspect.signature(type(self).__init__).parameters
        self.graph_recall_ = None
        value = resolve_graph_value(graph, X, builder_params=params,
                                    defaults={"n_neighbors": own["n_neighbors"].default,
                                              "weight": own["graph_weight"].default,
                                              "symmetrize": own["graph_symmetrize"].default,
                                              "self_tuned_constant":
                                                  own["self_tuned_constant"].default})
        W = value.W
        if value.recall is not None and np.isfinite(value.recall):
            self.graph_recall_ = float(value.recall)
        if value.weight in WEIGHTS:
            # the constant of the graph built (the self-tuned weights' own, graphlearning's
            # 4, when its builder does not name one)
            constant = float(DEFAULT_SELF_TUNED_CONSTANT if value.self_tuned_constant is None
                             else value.self_tuned_constant)
        sigma = self.sigma_w
        k = self.n_neighbors
        if callable(graph) and not isinstance(graph, str) and not sp.issparse(graph):
            # a builder object (e.g. fastgssl.graphs.EpsilonGraph(eps=...)) names its kernel
            if value.weight in WEIGHTS:
                weight = value.weight
                sigma = value.sigma_w
                k = k if value.n_neighbors is None else value.n_neighbors
                how = value.symmetrize
        # the builder's d_k^2 when it reports them, else found at first use (predict): an
        # exact k-nearest-neighbour search over X, not paid by a fit on a given graph
        self._k_induction = k
        scale = None
        if needs_scale(weight, how) and value.kth_sq_distances is not None \
                and np.shape(value.kth_sq_distances) == (n,):
            scale = np.asarray(value.kth_sq_distances, dtype=np.float64)
        if weight == "gaussian" and sigma is None:
            # the bandwidth the builder chose, when the graph reports it; a matrix (or a
            # plugin that does not report it) has it recovered from its edges
            if value.weight == "gaussian" and value.sigma_w is not None:
                sigma = value.sigma_w
            else:
                sigma = gaussian_sigma_from_edges(W, coords)
            if sigma is None:
                sigma = 1.0
        return W, coords, (weight, None if sigma is None else float(sigma), scale, how,
                           constant)

    def _induction_scale(self):
        """``d_k(x_i)^2`` of the training points, the self-tuned scale of the induction
        kernel and of the symmetrizations other than ``"max"`` (None otherwise): the
        builder's, or for a user graph (a plugin builder) the k-th squared distance of an
        exact search, done at its first use and kept."""
        if (self._scale_induction is None and self._X_fit is not None
                and needs_scale(self._weight_induction, self._symmetrize_induction)):
            k = min(int(self._k_induction), self._X_fit.shape[0] - 1)
            _, sq = knn_search(self._X_fit, k, n_jobs=self.n_jobs)
            self._scale_induction = sq[:, -1].copy()
        return self._scale_induction

    # -- fit -------------------------------------------------------------------------------

    def _fit(self, X, y):
        self._check_common_params()
        precomputed = self._precomputed()
        X_in = X
        X = check_X(X, "X")
        n = X.shape[0]
        if n < 2:
            raise ValueError(
                f"n_samples={n}: graph propagation needs at least 2 samples."
            )
        if not precomputed:
            # DataFrame column names recorded as scikit-learn does, checked at predict time
            validate_data(self, X_in, skip_check_array=True, reset=True)
        y, Y, labeled, classes = self._encode_targets(y, n)
        if classes is not None:
            self.classes_ = classes
        if isinstance(self.graph, str) and not precomputed:
            check_n_neighbors(self.n_neighbors, n)
        else:  # only the induction formula uses it, capped at the number of training points
            check_n_neighbors(self.n_neighbors, np.iinfo(np.int64).max)
        self.n_threads_ = thread_count(self.n_jobs)
        logger.info("%s: building the graph (%s) of %s points on %d thread(s)",
                    type(self).__name__, _graph_name(self.graph), f"{n:,}", self.n_threads_)
        started = time.perf_counter()
        W, coords, (weight, sigma, scale, how, constant) = self._build_graph(X)
        _log_graph(self, W, time.perf_counter() - started)
        started = time.perf_counter()
        self._weight_induction = weight
        self._constant_induction = constant
        self._sigma_induction = sigma
        self._scale_induction = scale
        self._symmetrize_induction = how
        self._X_fit = coords
        self.n_features_in_ = X.shape[1] if not precomputed else n
        if getattr(self, "n_landmarks", None) is None:
            F, reached, info = self._solve_full(W, labeled, Y)
            self.solver_info_ = info
        else:
            F, reached = self._solve_subsets(W, coords, labeled, Y)
            self.solver_info_ = None
        F = self._balanced(F, reached, labeled, Y)
        logger.info("%s: propagation on %s points, %s labeled, %.1f s", type(self).__name__,
                    f"{n:,}", f"{int(labeled.sum()):,}", time.perf_counter() - started)
        F, valid = self._apply_policy(F, reached, W, coords, y, labeled)
        self.graph_ = W
        self._F = F
        self._labeled_train = labeled
        self._Y_train = self._cv_targets(Y, labeled)
        self._valid = valid
        self._degrees = np.asarray(W.sum(axis=1)).ravel()
        self.n_unreached_ = int((~reached).sum())
        return F, valid

    # -- decisions -----------------------------------------------------------------------

    def _balanced(self, F, reached, labeled, Y):
        """The decision scores of the reached rows (class balancing, see :meth:`_scores`)."""
        if self._task != "classification":
            return F
        out = F.copy()
        unl = reached & ~labeled
        out[reached] = self._scores(F[reached], F[unl].sum(axis=0), Y[labeled].sum(axis=0))
        return out

    def _scores(self, F, mass, counts):
        """Decision scores of raw solution rows ``F`` given the solution's column sums
        ``mass`` over the unlabeled points and the class counts of the labels (the hook
        :class:`fastgssl.PropagationSystem` declares): class mass normalization when
        asked, else the raw values."""
        if getattr(self, "class_mass_normalization", False):
            return class_mass_normalize(F, mass, counts / counts.sum())
        return F

    def _encode_targets(self, y, n):
        """(y checked, Y one-hot / column, labeled, classes) of the targets."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; "
                f"mark unlabeled points with {'-1' if self._task == 'classification' else 'NaN'}."
            )
        if not sp.issparse(y) and np.asarray(y).dtype.kind == "c":
            raise ValueError("Complex data not supported: y has a complex dtype.")
        y = column_or_1d(y, warn=True)
        if self._task == "classification":
            y, labeled, classes = check_semi_supervised_y(y, n, task="classification")
            with warnings.catch_warnings():
                # "more unique classes than half the samples": the normal case at one or two
                # labels per class, not a sign of a regression target
                warnings.filterwarnings("ignore", message="The number of unique classes",
                                        category=UserWarning)
                check_classification_targets(y[labeled])
            Y = np.zeros((n, classes.size))
            pos = np.searchsorted(classes, y[labeled])
            Y[np.flatnonzero(labeled), pos] = 1.0
            return y, Y, labeled, classes
        y, labeled, _ = check_semi_supervised_y(y, n, task="regression")
        return y, np.where(labeled, y, 0.0)[:, None], labeled, None

    def _solve_full(self, W, labeled, Y):
        if self._criterion == "lgc":
            return _solve_lgc_full(W, labeled, Y, self.alpha, self.solver, self.rtol)
        return _solve_ss_full(W, labeled, Y, self.lam, self.solver, self.rtol)

    def _subsets(self, labeled, n):
        m = int(self.n_landmarks)
        lab = np.flatnonzero(labeled)
        unl = np.flatnonzero(~labeled)
        extra = m - lab.size
        if extra < 1:
            raise ValueError(
                f"n_landmarks={m} must exceed the number of labeled points ({lab.size}): the "
                f"subset S contains every labeled point plus unlabeled ones."
            )
        if extra * self.n_subsets > unl.size:
            raise ValueError(
                f"n_subsets={self.n_subsets} disjoint subsets of {extra} unlabeled points "
                f"(n_landmarks={m} minus {lab.size} labeled) need {extra * self.n_subsets} "
                f"unlabeled points but there are {unl.size}; lower n_landmarks or n_subsets."
            )
        rng = check_random_state(self.random_state)
        perm = rng.permutation(unl)
        return [np.sort(np.concatenate([lab, perm[j * extra:(j + 1) * extra]]))
                for j in range(self.n_subsets)]

    def _subset_operator(self, W, coords, S, R):
        """Induction operator f_R = P f_S over the k nearest subset points (graph kernel)."""
        form = "lgc" if self._criterion == "lgc" else "parzen"
        degrees = np.asarray(W.sum(axis=1)).ravel()
        if R.size == 0:
            return sp.csr_matrix((0, S.size))
        if coords is None:
            # no coordinates (graph='precomputed'): W_RS itself, row-normalized
            # (Bengio et al. 2005)
            W_RS = _sub(W, R, S).tocsr()
            W_RS.sort_indices()
            if form == "parzen":
                mass = np.asarray(W_RS.sum(axis=1)).ravel()
                P = sp.diags(1.0 / np.where(mass > 0, mass, 1.0)) @ W_RS
            else:
                a = np.asarray(W_RS.sum(axis=1)).ravel()
                inv_sd = np.zeros_like(degrees)
                np.divide(1.0, np.sqrt(degrees), out=inv_sd, where=degrees > 0)
                P = (sp.diags(self.alpha / np.sqrt(np.where(a > 0, a, 1.0))) @ W_RS
                     @ sp.diags(inv_sd[S]))
            return sp.csr_matrix(P)
        k = min(self.n_neighbors, S.size)
        ind, d2 = knn_search(coords[R], k, X_ref=coords[S], n_jobs=self.n_jobs)
        w = self._kernel(d2, ind, S, shift=form == "parzen")
        P, _ = induction_operator(ind, w, S.size, form=form, ref_degrees=degrees[S],
                                  alpha=getattr(self, "alpha", None))
        return P

    def _kernel(self, d2, ind, ref, *, shift):
        """Induction kernel values of queries at squared distances ``d2`` from their
        ``k`` nearest reference points ``ind`` (rows of the training points ``ref``, or of
        all of them when None); the self-tuned scale of a query is its k-th squared
        distance among the references, that of a reference its training graph's."""
        scale = self._induction_scale()
        qs = rs = None
        if scale is not None:
            qs = d2[:, -1] if d2.shape[1] else np.zeros(d2.shape[0])
            rs = scale[ind if ref is None else ref[ind]]
        return kernel_weights(d2, self._weight_induction, self._sigma_induction, shift=shift,
                              query_scale=qs, ref_scale=rs,
                              symmetrize=getattr(self, "_symmetrize_induction", None),
                              constant=getattr(self, "_constant_induction",
                                               DEFAULT_SELF_TUNED_CONSTANT))

    def _solve_subsets(self, W, coords, labeled, Y):
        n = W.shape[0]
        subsets = self._subsets(labeled, n)
        lam = getattr(self, "lam", None)
        alpha = getattr(self, "alpha", None)

        def one(S):
            in_S = np.zeros(n, dtype=bool)
            in_S[S] = True
            R = np.flatnonzero(~in_S)
            P = self._subset_operator(W, coords, S, R)
            return _solve_subset(W, labeled, Y, S, P, criterion=self._criterion, lam=lam,
                                 alpha=alpha, drop_rr=bool(self.drop_rr))

        if len(subsets) == 1:
            results = [one(subsets[0])]
        else:
            results = Parallel(n_jobs=check_n_jobs(self.n_jobs), prefer="threads")(
                delayed(one)(S) for S in subsets
            )
        total = np.zeros_like(Y, dtype=np.float64)
        count = np.zeros(n)
        for F, reached in results:
            total[reached] += F[reached]
            count += reached
        reached = count > 0
        total[reached] /= count[reached][:, None]
        return total, reached

    # -- components without labels ------------------------------------------------------------

    def _fill_value(self, y, labeled):
        if self._task == "classification":
            return np.full(self.classes_.size, 1.0 / self.classes_.size)
        return np.array([float(np.mean(y[labeled]))])

    def _apply_policy(self, F, reached, W, coords, y, labeled):
        if reached.all():
            return F, reached
        policy = self._policy()
        orphans = np.flatnonzero(~reached)
        n_comp, comp = component_labels(principal_submatrix(W, orphans))
        what = {
            "abstain": "they are left undecided (label -1, uniform distribution)",
            "uniform": "they get the uniform class distribution (the labeled mean for "
                       "regression)",
            "nearest": "each takes the solution at the closest point of a labeled component",
        }[policy]
        named = repr(self.unlabeled_policy)
        if policy != self.unlabeled_policy:
            named += f" (here {policy!r})"
        warnings.warn(
            f"{orphans.size} of {F.shape[0]} points in {n_comp} graph component(s) are not "
            f"connected to any labeled point; unlabeled_policy={named}: {what}. Increase "
            f"n_neighbors (or n_landmarks) or label a point in each component to avoid this.",
            UnlabeledComponentWarning,
            stacklevel=3,
        )
        F = F.copy()
        if policy == "abstain":
            F[orphans] = 0.0
            return F, reached
        if policy == "uniform":
            F[orphans] = self._fill_value(y, labeled)
            return F, np.ones_like(reached)
        sources = np.flatnonzero(reached)
        ind, d2 = knn_search(coords[orphans], 1, X_ref=coords[sources], n_jobs=self.n_jobs)
        ind, d2 = ind[:, 0], d2[:, 0]
        for c in range(n_comp):
            members = np.flatnonzero(comp == c)
            closest = members[np.argmin(d2[members])]
            F[orphans[members]] = F[sources[ind[closest]]]
        return F, np.ones_like(reached)

    # -- induction ----------------------------------------------------------------------------

    def _induce(self, X):
        """Induction formula at new points: (values (n_new, r), supported mask)."""
        check_is_fitted(self, "_F")
        form = "lgc" if self._criterion == "lgc" else "parzen"
        n_train = self._F.shape[0]
        if self._X_fit is None:
            K = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else sp.csr_matrix(
                check_X(X, "X", accept_sparse=False))
            if K.shape[1] != n_train:
                raise ValueError(
                    f"with graph='precomputed', X must hold affinities of the new points to "
                    f"the {n_train} training points: shape (n_new, {n_train}), got {K.shape}."
                )
            if K.nnz and K.data.min() < 0:
                raise ValueError("precomputed affinities must be nonnegative.")
            Kv = K @ sp.diags(self._valid.astype(np.float64))
            if form == "parzen":
                mass = np.asarray(Kv.sum(axis=1)).ravel()
                out = (Kv @ self._F) / np.where(mass > 0, mass, 1.0)[:, None]
                return out, mass > 0
            a = np.asarray(K.sum(axis=1)).ravel()
            inv_sd = np.zeros(n_train)
            np.divide(1.0, np.sqrt(self._degrees), out=inv_sd, where=self._degrees > 0)
            out = self.alpha * (Kv @ (inv_sd[:, None] * self._F))
            out /= np.sqrt(np.where(a > 0, a, 1.0))[:, None]
            return out, np.asarray((Kv @ sp.diags(inv_sd)).sum(axis=1)).ravel() > 0
        X_in = X
        X = check_X(X, "X")
        validate_data(self, X_in, skip_check_array=True, reset=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        k = min(self.n_neighbors, n_train)
        ind, d2 = knn_search(X, k, X_ref=self._X_fit, n_jobs=self.n_jobs)
        w = self._kernel(d2, ind, None, shift=True)
        P, supported = induction_operator(ind, w, n_train, ref_valid=self._valid, form=form,
                                          ref_degrees=self._degrees,
                                          alpha=getattr(self, "alpha", None))
        return P @ self._F, supported


class _PropagationClassifier(ClassifierMixin, _GraphPropagation):
    _task = "classification"

    def fit(self, X, y):
        """Fit the graph and propagate the labels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Labeled and unlabeled points; with ``graph="precomputed"`` the (n, n) affinity.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled points.

        Returns
        -------
        self
        """
        F, valid = self._fit(X, y)
        self.label_distributions_ = self._distributions(F, valid)
        self.transduction_ = self._labels(F, valid)
        decided = valid & ~self._labeled_train
        given = getattr(self, "class_priors", None)
        check_class_shares(np.argmax(F[decided], axis=1),
                           (self._Y_train[self._labeled_train] > 0).sum(axis=0),
                           self.classes_, type(self).__name__, self._share_hint,
                           priors=None if given is None else self.class_priors_)
        return self

    _share_hint = ("PoissonLearning (fastgssl.models) is built for few labels; "
                   "class_mass_normalization=True rebalances this solution.")

    def _distributions(self, F, valid):
        C = self.classes_.size
        P = np.clip(F, 0.0, None)
        s = P.sum(axis=1)
        good = valid & (s > 0)
        out = np.full((F.shape[0], C), 1.0 / C)
        out[good] = P[good] / s[good][:, None]
        # a valid row with no positive mass (possible for subset approximations): argmax
        odd = valid & ~(s > 0)
        if odd.any():
            out[odd] = 0.0
            out[odd, np.argmax(F[odd], axis=1)] = 1.0
        return out

    def _labels(self, F, valid):
        labels = self.classes_[np.argmax(F, axis=1)]
        if not valid.all():
            if labels.dtype.kind not in "iuf":
                labels = labels.astype(object)
            labels[~valid] = -1
        return labels

    def predict_proba(self, X):
        """Class distributions of new points by the induction formula.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            New points (with ``graph="precomputed"``: their affinities to the training points,
            shape (n_new, n_train)).

        Returns
        -------
        proba : ndarray of shape (n_new, n_classes)
            Rows sum to 1; a point whose neighbours all abstained gets the uniform row.
        """
        F, supported = self._induce(X)
        return self._distributions(F, supported)

    def predict(self, X):
        """Labels of new points by the induction formula (``-1`` where abstaining)."""
        F, supported = self._induce(X)
        return self._labels(F, supported)

    def score(self, X, y, sample_weight=None):
        """Accuracy of ``predict(X)`` over the entries of ``y`` that carry a label.

        Entries marked unlabeled as for :meth:`fit` (``-1``, ``None`` / ``NaN``) are left
        out, as in :meth:`fastgssl.models.LapSVM.score` (scikit-learn's
        ``ClassifierMixin.score`` would count each as an error). So
        ``model.fit(X, y).score(X, y)`` is the accuracy on the labeled points, and
        ``score(X, y_true)`` with every label known is the ordinary accuracy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True labels, ``-1`` for entries to leave out.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        score : float

        Raises
        ------
        ValueError
            When every entry of ``y`` is marked unlabeled.
        """
        return labeled_score(self, X, y, sample_weight)
