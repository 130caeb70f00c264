"""Label propagation as sparse linear systems, with function induction and subset approximations.

Implements Bengio, Delalleau & Le Roux (2004), *Efficient non-parametric function induction in
semi-supervised learning* (Bengio et al. (2005); Bengio et al. 2005), covering

- the criterion SS(lambda, K) of Bengio et al. (2005):
  (lambda Delta_L + D - W) f = lambda Delta_L y; at lambda = inf the labels are clamped and
  f is the harmonic function of Zhu, Ghahramani and Lafferty (2003), L_uu f_u = W_ul y_l;
- local and global consistency of Zhou et al. (2004): (I - alpha D^-1/2 W D^-1/2) F = Y;
- the induction formula for new points (Parzen windows over the graph's kernel, restricted to
  the ``n_neighbors`` nearest training points);
- the subset approximations of Bengio et al. (2005) section 5 (with and without the C_RR
  term) and their ensemble over disjoint subsets.

Every system is solved with :class:`fastgssl.solvers.LaplacianSolver` (multigrid-preconditioned
CG, all classes as one batched multi-right-hand-side solve), never by fixed-point iteration;
the m x m subset systems are solved densely.

Estimators: :class:`LabelPropagation`, :class:`LabelPropagationRegressor`,
:class:`LocalGlobalConsistency`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components as _cc
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from fastgssl._validation import (
    check_n_jobs,
    check_n_neighbors,
    check_random_state,
    check_semi_supervised_y,
    check_X,
)
from fastgssl.models._balance import check_class_shares, class_mass_normalize
from fastgssl.models._induction import (
    WEIGHTS,
    induction_operator,
    kernel_weights,
    subset_smoothness,
)

__all__ = [
    "DisconnectedGraphWarning",
    "LabelPropagation",
    "LabelPropagationRegressor",
    "LocalGlobalConsistency",
]

POLICIES = ("abstain", "uniform", "nearest")


# One public warning for graph components without a labeled point (kernel machines and
# label propagation alike); the old name stays importable.
from fastgssl._warnings import UnlabeledComponentWarning  # noqa: E402

DisconnectedGraphWarning = UnlabeledComponentWarning


# ---------------------------------------------------------------------------------------------
# graph handling
# ---------------------------------------------------------------------------------------------


def _infer_gaussian_sigma(W, X, max_edges=2000):
    """Bandwidth of a Gaussian graph recovered from its edges, w = exp(-d^2 / (2 sigma)).

    Used when the builder chose sigma_w itself and did not report it: any edge with
    0 < w < 1 gives sigma = -d^2 / (2 log w); the median over a sample of edges is returned.
    """
    W = sp.coo_matrix(W)
    ok = (W.data > 0) & (W.data < 1)
    if not ok.any() or X is None:
        return None
    idx = np.flatnonzero(ok)[:max_edges]
    xi = X[W.row[idx]]
    xj = X[W.col[idx]]
    diff = xi - xj
    if sp.issparse(diff):
        d2 = np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
    else:
        d2 = np.einsum("ij,ij->i", diff, diff)
    return float(np.median(d2 / (-2.0 * np.log(W.data[idx]))))


def _laplacian(W):
    from fastgssl.regularizers import laplacian

    return sp.csr_matrix(laplacian(W, kind="L", validate=False))


def _reached_by_labels(W, labeled):
    """Mask of vertices whose connected component contains a labeled vertex."""
    from fastgssl.regularizers import connected_components

    _, comp = connected_components(W)
    has_label = np.zeros(comp.max() + 1, dtype=bool)
    has_label[comp[labeled]] = True
    return has_label[comp]


# ---------------------------------------------------------------------------------------------
# full solves
# ---------------------------------------------------------------------------------------------


def _linear_solve(Q, B, solver, rtol):
    from fastgssl.solvers import reused_solver

    # every system here is nonsingular (unlabeled components were taken out)
    X, info = reused_solver(Q, method=solver, rtol=rtol, null_space=None).solve(B)
    X = np.asarray(X, dtype=np.float64).reshape(B.shape)
    return X, info


def _sub(M, rows, cols):
    return M[rows][:, cols]


def _solve_ss_full(W, labeled, Y, lam, solver, rtol):
    """Criterion SS(lambda) on the components that contain a labeled point."""
    n = W.shape[0]
    reached = _reached_by_labels(W, labeled)
    F = np.zeros((n, Y.shape[1]))
    L = _laplacian(W)
    info = None
    if np.isinf(lam):
        lab = np.flatnonzero(labeled)
        unl = np.flatnonzero(reached & ~labeled)
        F[lab] = Y[lab]
        if unl.size:
            B = -(_sub(L, unl, lab) @ Y[lab])
            F[unl], info = _linear_solve(_sub(L, unl, unl).tocsr(), B, solver, rtol)
    else:
        idx = np.flatnonzero(reached)
        delta = lam * labeled[idx].astype(np.float64)
        Q = (_sub(L, idx, idx) + sp.diags(delta)).tocsr()
        F[idx], info = _linear_solve(Q, delta[:, None] * Y[idx], solver, rtol)
    return F, reached, info


def _solve_lgc_full(W, labeled, Y, alpha, solver, rtol):
    """(I - alpha S) F = Y, solved as (D - alpha W) G = D^1/2 Y, F = D^1/2 G."""
    n = W.shape[0]
    reached = _reached_by_labels(W, labeled)
    d = np.asarray(W.sum(axis=1)).ravel()
    F = np.zeros((n, Y.shape[1]))
    active = np.flatnonzero(reached & (d > 0))
    isolated = reached & (d == 0)  # a lone labeled vertex: S has a zero row, so F = Y
    F[isolated] = Y[isolated]
    info = None
    if active.size:
        sd = np.sqrt(d[active])
        Q = (sp.diags(d[active]) - alpha * _sub(W, active, active)).tocsr()
        G, info = _linear_solve(Q, sd[:, None] * Y[active], solver, rtol)
        F[active] = sd[:, None] * G
    return F, reached, info


# ---------------------------------------------------------------------------------------------
# subset approximation (Bengio et al. (2005) section 5)
# ---------------------------------------------------------------------------------------------


def _dense_spd_solve(A, B, what):
    try:
        c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
        return scipy.linalg.cho_solve(c, B, check_finite=False)
    except np.linalg.LinAlgError:
        warnings.warn(
            f"the {what} system of size {A.shape[0]} is not numerically positive definite; "
            f"solved by least squares instead (check the graph weights).",
            RuntimeWarning,
            stacklevel=4,
        )
        return scipy.linalg.lstsq(A, B, check_finite=False)[0]


def _solve_subset(W, labeled, Y, S, P, *, criterion, lam, alpha, drop_rr):
    """One subset solve. Returns F over all n points and the reached mask.

    ``S`` lists the subset (labeled points included), ``P`` the (n - m) x m induction operator
    for the rest R = complement of S in the row order ``R = setdiff1d(arange(n), S)``.
    """
    n = W.shape[0]
    m = S.size
    in_S = np.zeros(n, dtype=bool)
    in_S[S] = True
    R = np.flatnonzero(~in_S)
    lab_local = labeled[S]
    Y_S = Y[S]
    A0 = subset_smoothness(W, S, R, P, normalized=criterion == "lgc", drop_rr=drop_rr)
    # components of the subset system that contain no labeled point are left undetermined
    _, comp = _cc(A0, directed=False)
    has_label = np.zeros(comp.max() + 1, dtype=bool)
    has_label[comp[lab_local]] = True
    reached_S = has_label[comp]
    F_S = np.zeros((m, Y.shape[1]))
    if criterion == "lgc":
        mu = (1.0 - alpha) / alpha
        P_csr = sp.csr_matrix(P)
        A = A0 + mu * (sp.identity(m) + (P_csr.T @ P_csr))
        idx = np.flatnonzero(reached_S)
        Ad = _sub(sp.csr_matrix(A), idx, idx).toarray()
        F_S[idx] = _dense_spd_solve(Ad, mu * Y_S[idx], "subset LGC")
    elif np.isinf(lam):
        lab = np.flatnonzero(lab_local)
        free = np.flatnonzero(reached_S & ~lab_local)
        F_S[lab] = Y_S[lab]
        if free.size:
            A0c = sp.csr_matrix(A0)
            B = -(_sub(A0c, free, lab) @ Y_S[lab])
            F_S[free] = _dense_spd_solve(_sub(A0c, free, free).toarray(), B, "subset harmonic")
    else:
        idx = np.flatnonzero(reached_S)
        delta = lam * lab_local[idx].astype(np.float64)
        Ad = _sub(sp.csr_matrix(A0), idx, idx).toarray()
        Ad[np.diag_indices_from(Ad)] += delta
        F_S[idx] = _dense_spd_solve(Ad, delta[:, None] * Y_S[idx], "subset SS")
    F = np.zeros((n, Y.shape[1]))
    F[S] = F_S
    P_csr = sp.csr_matrix(P)
    if criterion == "lgc":
        F[R] = P_csr @ F_S  # undetermined subset values are exactly 0 here
        reached_R = (abs(P_csr) @ reached_S.astype(np.float64)) > 0
    else:
        # Parzen over the determined subset points only (renormalized)
        Pv = P_csr @ sp.diags(reached_S.astype(np.float64))
        mass = np.asarray(Pv.sum(axis=1)).ravel()
        reached_R = mass > 0
        F[R] = (Pv @ F_S) / np.where(reached_R, mass, 1.0)[:, None]
    reached = np.zeros(n, dtype=bool)
    reached[S] = reached_S
    reached[R] = reached_R
    return F, reached


# ---------------------------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------------------------


class _GraphPropagation(BaseEstimator):
    """Shared machinery: graph, solve (full or subsets), component policy, induction."""

    _criterion = "ss"  # "ss" or "lgc"
    _task = "classification"
    # scikit-learn's parameter constraints (BaseEstimator._validate_params at fit); checks
    # that involve several parameters stay in _check_common_params
    _parameter_constraints = {
        "graph": [str, callable, "sparse matrix", np.ndarray],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "graph_weight": [StrOptions(set(WEIGHTS))],
        "sigma_w": [Interval(Real, 0, None, closed="neither"), None],
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

    def _policies(self):
        return POLICIES

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
        """Return (W, coordinates or None, (weight, sigma) of the induction kernel)."""
        graph = self.graph
        weight = self.graph_weight
        n = X.shape[0]
        params = {
            "n_neighbors": self.n_neighbors,
            "weight": self.graph_weight,
            "sigma_w": self.sigma_w,
            "n_jobs": self.n_jobs,
        }
        from fastgssl.graphs import resolve_graph

        coords = X
        if isinstance(graph, str) and graph == "precomputed":
            W = resolve_graph(X, None, n_samples=n, name="X (graph='precomputed')")
            return W, None, (weight, None)
        W = resolve_graph(graph, X, builder_params=params)
        if callable(graph) and not isinstance(graph, str) and not sp.issparse(graph):
            # a builder object (e.g. fastgssl.graphs.EpsilonGraph(eps=...)) names its kernel
            if getattr(graph, "weight", None) in WEIGHTS:
                weight = graph.weight
                if getattr(graph, "sigma_w", None) is not None:
                    return W, coords, (weight, float(graph.sigma_w))
        sigma = self.sigma_w
        if weight == "gaussian" and sigma is None:
            # the builder's heuristic bandwidth, recovered exactly from the edges
            sigma = _infer_gaussian_sigma(W, coords)
            if sigma is None:
                sigma = 1.0
        return W, coords, (weight, sigma)

    # -- fit -------------------------------------------------------------------------------

    def _fit(self, X, y):
        self._check_common_params()
        precomputed = self._precomputed()
        X_in = X
        X = check_X(X, "X")
        if X.shape[0] < 2:
            raise ValueError(
                f"n_samples={X.shape[0]}: graph propagation needs at least 2 samples."
            )
        if precomputed:
            if not sp.issparse(X):
                X = np.asarray(X, dtype=np.float64)
            n = X.shape[0]
        else:
            X = check_X(X, "X", min_samples=2)
            n = X.shape[0]
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
        W, coords, (weight, sigma) = self._build_graph(X)
        self._weight_induction = weight
        self._sigma_induction = sigma
        self._X_fit = coords
        self.n_features_in_ = X.shape[1] if not precomputed else n
        if getattr(self, "n_landmarks", None) is None:
            F, reached, info = self._solve_full(W, labeled, Y)
            self.solver_info_ = info
        else:
            F, reached = self._solve_subsets(W, coords, labeled, Y)
            self.solver_info_ = None
        F = self._balanced(F, reached, labeled, Y)
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

    def _system_kind(self):
        if self._criterion == "lgc":
            return "lgc"
        return "harmonic" if np.isinf(self.lam) else "ss"

    def _propagation_system(self):
        """The system this fit solved (None for the subset approximation, whose CV
        re-solves)."""
        from fastgssl._protocol import PropagationSystem

        if getattr(self, "n_landmarks", None) is not None:
            return None
        return PropagationSystem(kind=self._system_kind(), graph=self.graph_,
                                 lam=float(getattr(self, "lam", np.inf)),
                                 alpha=float(getattr(self, "alpha", 0.99)),
                                 solver=self.solver, rtol=float(self.rtol),
                                 scores=self._scores, fill=self._policy_fill())

    def _policy_fill(self):
        """``Y_K -> row``: the value ``unlabeled_policy`` gives points of a component
        without labels (None for "nearest", which needs the coordinates)."""
        k = len(self.classes_) if self._task == "classification" else 1
        if self.unlabeled_policy == "abstain":
            return lambda Y_K: np.zeros(k)
        if self.unlabeled_policy == "uniform":
            if self._task == "classification":
                return lambda Y_K: np.full(k, 1.0 / k)
            return lambda Y_K: np.array([float(np.mean(Y_K[:, 0]))])
        return None

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

    def cv_objective(self, y):
        """What the parameters and the targets ``y`` define, without fitting
        (:class:`fastgssl.CVObjective`): the task, the encoded targets (+-1 one-vs-rest
        columns, or the values) and the labeled mask. Label propagation has no loss or
        kernel; its cross-validation re-solves the propagation (see :meth:`cv_state`).

        Parameters
        ----------
        y : array-like of shape (n_samples,)

        Returns
        -------
        CVObjective
        """
        from fastgssl._protocol import CVObjective

        self._check_common_params()
        y_arr = np.asarray(y) if y is not None else None
        _, Y, labeled, classes = self._encode_targets(y, 0 if y_arr is None else len(y_arr))
        return CVObjective(task=self._task, y=self._cv_targets(Y, labeled), labeled=labeled,
                           classes=classes, **self._graph_sharing())

    def _graph_sharing(self):
        """The sharing declarations of :class:`fastgssl.CVObjective`: which parameters
        define W, how to build it, the k of its kNN search, and this learner on a given W."""
        graph = self.graph
        if self._precomputed():
            return {"graph_key": ("precomputed",), "build_graph": lambda X: X,
                    "with_graph": lambda W: clone(self)}
        if isinstance(graph, str):
            key = ("builder", graph, self.n_neighbors, self.graph_weight, self.sigma_w)
        elif sp.issparse(graph) or isinstance(graph, np.ndarray):
            key = ("matrix", id(graph))
        else:
            key = ("callable", id(graph))

        def build_graph(X):
            return self._build_graph(check_X(X, "X", min_samples=2))[0]

        return {"graph_key": key, "build_graph": build_graph,
                "knn_k": (int(self.n_neighbors) if isinstance(graph, str) and graph == "knn"
                          else None),
                "with_graph": lambda W: clone(self).set_params(graph=W)}

    def _cv_targets(self, Y, labeled):
        """Targets as CV encodes them: +-1 one-vs-rest columns, or the values."""
        if self._task == "classification":
            return np.where(labeled[:, None], 2.0 * Y - 1.0, 0.0)
        return Y[:, 0]

    def cv_state(self):
        """The fitted state that :mod:`fastgssl.cv` reads (:class:`fastgssl.CVState`).

        Label propagation has no kernel or loss: cross-validation re-solves the propagation
        with the fold's labels hidden on the same graph (transductive protocol), or refits
        without the fold's points (inductive protocol, the induction formula at the held-out
        points).
        """
        from sklearn.utils.validation import check_is_fitted

        from fastgssl._protocol import CVState

        check_is_fitted(self, "graph_")
        F = np.asarray(self._F, dtype=np.float64)
        return CVState(task=self._task, y=self._Y_train, labeled=self._labeled_train,
                       f=F if F.shape[1] > 1 else F[:, 0],
                       classes=getattr(self, "classes_", None), graph=self.graph_,
                       estimator=self, relabel=self._relabeled_state,
                       propagation=self._propagation_system())

    def _relabeled_state(self, y):
        """CVState of this model refitted on its own graph with the targets ``y``."""
        refit = clone(self).set_params(graph=self.graph_)
        if self._X_fit is None:  # graph='precomputed': the affinity is X
            refit.set_params(graph="precomputed")
            return refit.fit(self.graph_, y).cv_state()
        return refit.fit(self._X_fit, y).cv_state()

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
        from fastgssl.graphs import knn_search

        k = min(self.n_neighbors, S.size)
        ind, d2 = knn_search(coords[R], k, X_ref=coords[S], n_jobs=self.n_jobs)
        w = kernel_weights(d2, self._weight_induction, self._sigma_induction,
                           shift=form == "parzen")
        P, _ = induction_operator(ind, w, S.size, form=form, ref_degrees=degrees[S],
                                  alpha=getattr(self, "alpha", None))
        return P

    def _solve_subsets(self, W, coords, labeled, Y):
        from joblib import Parallel, delayed

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
        policy = self.unlabeled_policy
        orphans = np.flatnonzero(~reached)
        n_comp, comp = _cc(_sub(W, orphans, orphans), directed=False)
        what = {
            "abstain": "they are left undecided (label -1, uniform distribution)",
            "uniform": "they get the uniform class distribution (the labeled mean for "
                       "regression)",
            "nearest": "each takes the solution at the closest point of a labeled component",
        }[policy]
        warnings.warn(
            f"{orphans.size} of {F.shape[0]} points in {n_comp} graph component(s) are not "
            f"connected to any labeled point; unlabeled_policy={policy!r}: {what}. Increase "
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
        from fastgssl.graphs import knn_search

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
        from fastgssl.graphs import knn_search

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
        w = kernel_weights(d2, self._weight_induction, self._sigma_induction, shift=True)
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
        check_class_shares(np.argmax(F[decided], axis=1),
                           (self._Y_train[self._labeled_train] > 0).sum(axis=0),
                           self.classes_, type(self).__name__, self._share_hint)
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


class LabelPropagation(_PropagationClassifier):
    """Label propagation by the criterion SS(lambda, K) (Bengio et al. 2005; harmonic at
    lambda = inf).

    Parameters
    ----------
    lam : float, default=numpy.inf
        Weight lambda of the labeled-fit term. ``inf`` clamps the labels (harmonic function of
        Zhu, Ghahramani & Lafferty 2003); a finite value lets noisy labels move.
    graph : str, callable or sparse matrix, default="knn"
        A graph builder registered in the ``fastgssl.graphs`` group (``"knn"``, ``"epsilon"``,
        ``"nndescent"``, a plugin name), built with ``n_neighbors``, ``graph_weight`` and
        ``sigma_w``; ``"precomputed"`` (``X`` is then the (n, n) affinity matrix and ``predict``
        takes affinities of new points to the training points); a callable ``X -> W`` such
        as a configured builder ``fastgssl.graphs.EpsilonGraph(eps=0.5, weight="gaussian")``
        (its ``weight`` / ``sigma_w`` then define the induction kernel); or a symmetric
        nonnegative (n, n) sparse matrix W over the rows of ``X``.
    n_neighbors : int, default=10
        k of the kNN graph, and the number of training (or subset) neighbours the induction
        formula uses for a new point.
    graph_weight : {"binary", "gaussian", "distance"}, default="gaussian"
        Edge weight of the graph and kernel of the induction formula:
        1, exp(-||x - x'||^2 / (2 sigma_w)), or the distance.
    sigma_w : float or None, default=None
        Gaussian bandwidth, a squared distance: exp(-d^2 / (2 sigma_w)). ``None``: the
        graph builder's heuristic; the induction formula uses the value the builder chose
        (recovered from the graph's edges when the builder does not report it).
    n_landmarks : int or None, default=None
        Subset size m of the approximation of Bengio et al. (2005) section 5 (labeled
        points included); ``None`` solves the full n-dimensional system.
    drop_rr : bool, default=False
        Leave the C_RR term (edges between two non-subset points) out of the subset system.
    n_subsets : int, default=1
        Ensemble size: average over this many subsets with disjoint unlabeled parts.
    unlabeled_policy : {"abstain", "uniform", "nearest"}, default="abstain"
        Points in graph components without a labeled point (a warning names how many):
        ``"abstain"`` labels them -1 (uniform distribution), ``"uniform"`` gives the uniform
        distribution, ``"nearest"`` copies the solution at the closest point of a labeled
        component (the harmonic solution after linking the component to it by one edge).
    class_mass_normalization : bool, default=False
        Class mass normalization (Zhu, Ghahramani & Lafferty 2003): decide by
        argmax_c q_c F_ic / sum_{j unlabeled} F_jc, with q_c the class's share of the
        labels, instead of argmax_c F_ic. It counters the collapse of the harmonic solution
        onto one class at low label rates (see Warns); exact CV applies it per fold.
    solver : {"auto", "amg", "cg", "direct"}, default="auto"
        Method of :class:`fastgssl.solvers.LaplacianSolver`.
    rtol : float, default=1e-6
        Relative residual tolerance of the sparse solve.
    random_state : int, RandomState or None, default=None
        Draws the subsets.
    n_jobs : int or None, default=None
        Threads for the graph build and the subset ensemble (joblib).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        Label of every training point (-1 where abstaining).
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Row-normalized scores (nonnegative; rows sum to 1).
    graph_ : scipy.sparse.csr_matrix
        The graph W that was used (symmetric, empty diagonal).
    n_unreached_ : int
        Training points in components without a labeled point (before the policy).
    solver_info_ : object
        The ``info`` of the sparse solve (``None`` for the subset approximation).

    Notes
    -----
    With Delta_L = diag(1 on labeled points) and L = D - W, f minimises

        C(f) = lambda sum_{i in L} (f_i - y_i)^2 + 1/2 sum_ij W_ij (f_i - f_j)^2,

    i.e. (lambda Delta_L + L) f = lambda Delta_L y, one right-hand side per class (one-hot
    Y), all classes in one batched multigrid-CG solve. At lambda = inf, f_l = y_l and
    L_uu f_u = W_ul y_l. Both systems are symmetric positive definite on the components that
    hold a labeled point; the other components follow ``unlabeled_policy``.

    A new point x gets the minimiser of the same criterion over f(x) alone (Bengio et al.
    2005, eq. 7),

        f(x) = sum_j K(x, x_j) f_j / sum_j K(x, x_j),

    over its ``n_neighbors`` nearest training points. On an unlabeled training point with its
    own graph row (``W[i]``, which excludes i itself) this is exactly its transductive value
    (the harmonic property). ``predict(X_train)`` treats the rows as *new* points, as
    scikit-learn's LabelSpreading does: each row then finds itself at distance 0 among its
    neighbours, so it can differ from ``transduction_`` (read ``transduction_`` /
    ``label_distributions_`` for the training points). Seed 004 reports that on held-out
    points the gap to re-solving with x included is as small as the change from substituting
    ~3% of the training set.

    Subset approximation (``n_landmarks=m``): S = labeled points plus m - l random unlabeled
    ones, R = the rest, f_R = P f_S with P the induction formula over the k nearest points of
    S; f_S minimises C(Pi f_S), Pi = [I; P], i.e. (lambda Delta_L + Pi^T L Pi) f_S =
    lambda Delta_L y (Bengio et al. 2005; ``drop_rr`` removes the C_RR term), solved densely.

    Warns
    -----
    fastgssl.ClassShareWarning
        When the predicted class shares of the unlabeled points depart grossly from the
        labeled shares: some class c with labeled share p_c, expected on at least 20
        unlabeled points, receives less than p_c / 4. At one or two labels per class the
        harmonic solution is nearly constant away from the labels and collapses this way;
        :class:`PoissonLearning` is built for that regime.

    See Also
    --------
    LocalGlobalConsistency : the normalized criterion of Zhou et al. (2004).
    LabelPropagationRegressor : the same criterion for real targets.
    fastgssl.cv.cv_score : exact transductive CV (labels of a fold hidden, one graph).

    References
    ----------
    Zhu, Ghahramani & Lafferty (2003). Semi-supervised learning using Gaussian fields and
    harmonic functions. ICML.
    Bengio, Delalleau & Le Roux (2005). Label propagation and quadratic criterion. In
    Semi-Supervised Learning, MIT Press.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.models import LabelPropagation
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.normal(-3, 1, (50, 2)), rng.normal(3, 1, (50, 2))]
    >>> y = np.full(100, -1); y[0] = 0; y[50] = 1
    >>> model = LabelPropagation(n_neighbors=5).fit(X, y)
    >>> int((model.transduction_[:50] == 0).sum()), int((model.transduction_[50:] == 1).sum())
    (50, 50)
    """

    _criterion = "ss"
    _parameter_constraints = {**_GraphPropagation._parameter_constraints,
                              "lam": [Interval(Real, 0, None, closed="right")]}

    def __init__(self, lam=np.inf, *, graph="knn", n_neighbors=10, graph_weight="gaussian",
                 sigma_w=None, n_landmarks=None, drop_rr=False, n_subsets=1,
                 unlabeled_policy="abstain", class_mass_normalization=False, solver="auto",
                 rtol=1e-6, random_state=None, n_jobs=None):
        self.lam = lam
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.graph_weight = graph_weight
        self.sigma_w = sigma_w
        self.n_landmarks = n_landmarks
        self.drop_rr = drop_rr
        self.n_subsets = n_subsets
        self.unlabeled_policy = unlabeled_policy
        self.class_mass_normalization = class_mass_normalization
        self.solver = solver
        self.rtol = rtol
        self.random_state = random_state
        self.n_jobs = n_jobs


class LocalGlobalConsistency(_PropagationClassifier):
    """Local and global consistency (Zhou et al. 2004), solved as one sparse SPD system.

    Parameters
    ----------
    alpha : float, default=0.99
        Propagation weight in (0, 1); the fit term has weight mu = (1 - alpha) / alpha.
    graph, n_neighbors, graph_weight, sigma_w
        The graph and the induction kernel, as in :class:`LabelPropagation`.
    n_landmarks, drop_rr, n_subsets
        The subset approximation, as in :class:`LabelPropagation`.
    unlabeled_policy
        Components without a labeled point, as in :class:`LabelPropagation`.
    class_mass_normalization : bool, default=False
        Class mass normalization of the scores, as in :class:`LabelPropagation`.
    solver, rtol, random_state, n_jobs
        The sparse solve, the subset draws and the threads, as in
        :class:`LabelPropagation`.

    Attributes
    ----------
    classes_, transduction_, label_distributions_, graph_, n_unreached_, solver_info_
        As in :class:`LabelPropagation`.

    Notes
    -----
    With S = D^-1/2 W D^-1/2, F minimises sum_ij W_ij ||F_i/sqrt(d_i) - F_j/sqrt(d_j)||^2 / 2
    + mu sum_i ||F_i - Y_i||^2, whose solution is F = (1 - alpha) (I - alpha S)^-1 Y. We solve
    the equivalent symmetric M-matrix system (D - alpha W) G = D^1/2 Y, F = D^1/2 G (SPD for
    alpha < 1), all classes at once; a labeled vertex without edges keeps F = Y. Unlike
    scikit-learn's LabelSpreading this is the exact fixed point (no truncated iteration), the
    graph has no self-loops, and components without labels follow ``unlabeled_policy``
    instead of producing NaN.

    Induction (minimising the criterion over F(x) alone):
    F(x) = alpha sum_j K(x, x_j) F_j / sqrt(a(x) d_j), a(x) = sum_j K(x, x_j), which equals
    the transductive F on an unlabeled training point with its graph row. The subset
    approximation uses this operator for Pi = [I; P] and solves
    (Pi^T (I - S) Pi + mu Pi^T Pi) F_S = mu Y_S.

    Warns
    -----
    fastgssl.ClassShareWarning
        Collapsed class shares, by the rule of :class:`LabelPropagation`.

    See Also
    --------
    LabelPropagation : the criterion SS(lambda) with the unnormalized Laplacian.
    sklearn.semi_supervised.LabelSpreading : the same fixed point by truncated iteration.

    References
    ----------
    Zhou, Bousquet, Lal, Weston & Schoelkopf (2004). Learning with local and global
    consistency. NIPS.
    """

    _criterion = "lgc"
    _parameter_constraints = {**_GraphPropagation._parameter_constraints,
                              "alpha": [Interval(Real, 0, 1, closed="neither")]}

    def __init__(self, alpha=0.99, *, graph="knn", n_neighbors=10, graph_weight="gaussian",
                 sigma_w=None, n_landmarks=None, drop_rr=False, n_subsets=1,
                 unlabeled_policy="abstain", class_mass_normalization=False, solver="auto",
                 rtol=1e-6, random_state=None, n_jobs=None):
        self.alpha = alpha
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.graph_weight = graph_weight
        self.sigma_w = sigma_w
        self.n_landmarks = n_landmarks
        self.drop_rr = drop_rr
        self.n_subsets = n_subsets
        self.unlabeled_policy = unlabeled_policy
        self.class_mass_normalization = class_mass_normalization
        self.solver = solver
        self.rtol = rtol
        self.random_state = random_state
        self.n_jobs = n_jobs


class LabelPropagationRegressor(RegressorMixin, _GraphPropagation):
    """Criterion SS(lambda, K) of Bengio et al. (2005) for real targets (harmonic at
    lambda = inf).

    Parameters
    ----------
    lam : float, default=numpy.inf
        Weight of the labeled-fit term; ``inf`` clamps the targets.
    unlabeled_policy : {"uniform", "nearest"}, default="uniform"
        Points in graph components without a labeled point (a warning names how many):
        ``"uniform"`` gives them the mean of the labeled targets, ``"nearest"`` copies the
        solution at the closest point of a labeled component.
    graph, n_neighbors, graph_weight, sigma_w
        The graph and the induction kernel, as in :class:`LabelPropagation`.
    n_landmarks, drop_rr, n_subsets
        The subset approximation, as in :class:`LabelPropagation`.
    solver, rtol, random_state, n_jobs
        The sparse solve, the subset draws and the threads, as in
        :class:`LabelPropagation`.

    Attributes
    ----------
    transduction_ : ndarray of shape (n_samples,)
        f on every training point.
    graph_, n_unreached_, solver_info_
        As in :class:`LabelPropagation`.

    Notes
    -----
    Same linear systems as :class:`LabelPropagation` with the single right-hand side y
    (``NaN`` marks unlabeled points); ``predict`` is the induction formula
    f(x) = sum_j K(x, x_j) f_j / sum_j K(x, x_j).

    See Also
    --------
    LabelPropagation : the classifier of the same criterion.
    LapRLS : manifold-regularized least squares (a kernel term as well as the graph).

    References
    ----------
    Bengio, Delalleau & Le Roux (2005). Label propagation and quadratic criterion, in
    Chapelle, Schoelkopf & Zien (eds.), Semi-Supervised Learning, MIT Press (section 5:
    the criterion for real targets and its induction formula).
    """

    _criterion = "ss"
    _task = "regression"
    _parameter_constraints = {**_GraphPropagation._parameter_constraints,
                              "lam": [Interval(Real, 0, None, closed="right")]}

    def __init__(self, lam=np.inf, *, graph="knn", n_neighbors=10, graph_weight="gaussian",
                 sigma_w=None, n_landmarks=None, drop_rr=False, n_subsets=1,
                 unlabeled_policy="uniform", solver="auto", rtol=1e-6, random_state=None,
                 n_jobs=None):
        self.lam = lam
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.graph_weight = graph_weight
        self.sigma_w = sigma_w
        self.n_landmarks = n_landmarks
        self.drop_rr = drop_rr
        self.n_subsets = n_subsets
        self.unlabeled_policy = unlabeled_policy
        self.solver = solver
        self.rtol = rtol
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _policies(self):
        return ("uniform", "nearest")

    def fit(self, X, y):
        """Fit the graph and propagate the targets (``NaN`` marks unlabeled points)."""
        F, _ = self._fit(X, y)
        self.transduction_ = F[:, 0].copy()
        return self

    def predict(self, X):
        """Targets of new points by the induction formula."""
        F, supported = self._induce(X)
        out = F[:, 0]
        if not supported.all():  # cannot happen after the fill policies; kept defensive
            out = np.where(supported, out, float(np.mean(self._F[self._valid, 0])))
        return out
