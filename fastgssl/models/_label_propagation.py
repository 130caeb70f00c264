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

This module holds the family's criteria, as scikit-learn's ``label_propagation.py`` holds
LabelPropagation and LabelSpreading: :class:`LabelPropagation` and
:class:`LabelPropagationRegressor` (the criterion SS(lambda, K)) and
:class:`LocalGlobalConsistency` (the normalized criterion, solved exactly as one sparse SPD
system, not by truncated iteration as scikit-learn's LabelSpreading); the shared machinery
is in :mod:`._propagation_base`, the linear systems in :mod:`._propagation_systems`, the
induction formula in :mod:`._induction`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import Interval

from fastgssl._validation import store_init_arguments

# private names other modules and tests import from here
from fastgssl.exceptions import UnlabeledComponentWarning
from fastgssl.models._propagation_base import (  # noqa: F401
    _GraphPropagation,
    _PropagationClassifier,
)
from fastgssl.models._propagation_docs import (
    CLASS_MASS_PARAM,
    CLASSIFIER_ATTRIBUTES,
    FIT_ATTRIBUTES,
    GRAPH_PARAMS,
    POLICY_PARAM,
    SOLVE_PARAMS,
    SUBSET_PARAMS,
)
from fastgssl.models._propagation_systems import (  # noqa: F401
    _laplacian,
    _solve_ss_full,
    _solve_subset,
)
from fastgssl.models._reweighting import (
    REWEIGHTING_CONSTRAINTS,
    REWEIGHTING_NOTES,
    REWEIGHTING_PARAMS,
    check_reweighting,
    node_weights,
    reweighted_graph,
)
from fastgssl.models._scoring import labeled_score

__all__ = [
    "DisconnectedGraphWarning",
    "LabelPropagation",
    "LabelPropagationRegressor",
    "LocalGlobalConsistency",
]

# One public warning for graph components without a labeled point (kernel machines and
# label propagation alike); the old name stays importable.
DisconnectedGraphWarning = UnlabeledComponentWarning

_LAM = {"lam": [Interval(Real, 0, None, closed="right")]}


class LabelPropagation(_PropagationClassifier):
    __doc__ = """Label propagation by the criterion SS(lambda, K) (Bengio et al. 2005; harmonic at
    lambda = inf).

    Parameters
    ----------
    lam : float, default=numpy.inf
        Weight lambda of the labeled-fit term (the SS(lambda) criterion). ``inf`` clamps the
        labels (harmonic function of Zhu, Ghahramani & Lafferty 2003); a finite value lets
        noisy labels move. Larger trusts the labels more: the opposite of the ridge ``lam``
        of :class:`KRR` / :class:`SVM`, which smooths more.
""" + GRAPH_PARAMS + SUBSET_PARAMS + POLICY_PARAM + CLASS_MASS_PARAM + SOLVE_PARAMS + (
        REWEIGHTING_PARAMS) + """
    Attributes
    ----------
""" + CLASSIFIER_ATTRIBUTES + """    reweighting_weights_ : ndarray of shape (n_samples,) or None
        The per-node factors of ``reweighting`` (None without it).

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

""" + REWEIGHTING_NOTES + """
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
    Shi, Osher & Zhu (2017). Weighted nonlocal Laplacian on interpolation from sparse data.
    Journal of Scientific Computing 73:1164-1177.
    Calder & Slepcev (2020). Properly-weighted graph Laplacian for semi-supervised learning.
    Applied Mathematics & Optimization 82:1111-1159.
    Calder, Slepcev & Thorpe (2023). Rates of convergence for Laplacian semi-supervised
    learning with low labeling rates. Research in the Mathematical Sciences 10:10
    (Poisson-reweighted Laplace learning).

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
    _parameter_constraints = {**_GraphPropagation._parameter_constraints, **_LAM,
                              **REWEIGHTING_CONSTRAINTS}

    def __init__(self, lam=np.inf, *, graph="knn", n_neighbors=10, graph_weight="self_tuned",
                 graph_symmetrize="max", sigma_w=None, self_tuned_constant=3.0,
                 n_landmarks=None, drop_rr=False,
                 n_subsets=1, unlabeled_policy="auto", class_mass_normalization=False,
                 solver="auto", rtol=1e-6, random_state=None, n_jobs=None, reweighting=None,
                 reweighting_params=None):
        store_init_arguments(self, locals())

    # -- reweighting near the labels (fastgssl.models._reweighting) ----------------------------

    def _check_common_params(self):
        super()._check_common_params()
        check_reweighting(self.reweighting, self.reweighting_params, self._precomputed())

    def _reweighted(self, W, labeled):
        """W reweighted for this labeled set (W itself without ``reweighting``); sets
        ``reweighting_weights_``."""
        self.reweighting_weights_ = None
        if self.reweighting is None:
            return W
        a, _ = node_weights(self.reweighting, W, labeled, coords=self._X_fit,
                            params=self.reweighting_params, solver=self.solver,
                            rtol=self.rtol, n_jobs=self.n_jobs)
        self.reweighting_weights_ = a
        return reweighted_graph(self.reweighting, W, a)

    def _solve_full(self, W, labeled, Y):
        if self.reweighting is None:
            return super()._solve_full(W, labeled, Y)
        # weights up to n / m or 1e7 times the others: solved with a diagonal scaling
        return _solve_ss_full(self._reweighted(W, labeled), labeled, Y, self.lam, self.solver,
                              self.rtol, jacobi=True)

    def _solve_subsets(self, W, coords, labeled, Y):
        return super()._solve_subsets(self._reweighted(W, labeled), coords, labeled, Y)

    def _propagation_system(self):
        # every reweighting depends on which points are labeled: exact CV refits per fold
        return None if self.reweighting is not None else super()._propagation_system()


class LabelPropagationRegressor(RegressorMixin, _GraphPropagation):
    __doc__ = """Criterion SS(lambda, K) of Bengio et al. (2005) for real targets (harmonic at
    lambda = inf).

    Parameters
    ----------
    lam : float, default=numpy.inf
        Weight of the labeled-fit term (SS(lambda), as in :class:`LabelPropagation`; not a
        ridge); ``inf`` clamps the targets.
    unlabeled_policy : {"uniform", "nearest"}, default="uniform"
        Points in graph components without a labeled point (a warning names how many):
        ``"uniform"`` gives them the mean of the labeled targets, ``"nearest"`` copies the
        solution at the closest point of a labeled component.
""" + GRAPH_PARAMS + SUBSET_PARAMS + SOLVE_PARAMS + """
    Attributes
    ----------
    transduction_ : ndarray of shape (n_samples,)
        f on every training point.
""" + FIT_ATTRIBUTES + """
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
    _parameter_constraints = {**_GraphPropagation._parameter_constraints, **_LAM}

    def __init__(self, lam=np.inf, *, graph="knn", n_neighbors=10, graph_weight="self_tuned",
                 graph_symmetrize="max", sigma_w=None, self_tuned_constant=3.0,
                 n_landmarks=None, drop_rr=False,
                 n_subsets=1, unlabeled_policy="uniform", solver="auto", rtol=1e-6,
                 random_state=None, n_jobs=None):
        store_init_arguments(self, locals())

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

    def score(self, X, y, sample_weight=None):
        """R^2 of ``predict(X)`` over the entries of ``y`` that are not ``NaN`` (the
        unlabeled marker of :meth:`fit`); a ValueError when every entry is ``NaN``."""
        return labeled_score(self, X, y, sample_weight, task="regression")


class LocalGlobalConsistency(_PropagationClassifier):
    __doc__ = """Local and global consistency (Zhou et al. 2004), solved as one sparse SPD system.

    Parameters
    ----------
    alpha : float, default=0.99
        Propagation weight in (0, 1); the fit term has weight mu = (1 - alpha) / alpha.
""" + GRAPH_PARAMS + SUBSET_PARAMS + POLICY_PARAM + CLASS_MASS_PARAM + SOLVE_PARAMS + """
    Attributes
    ----------
""" + CLASSIFIER_ATTRIBUTES + """
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

    def __init__(self, alpha=0.99, *, graph="knn", n_neighbors=10, graph_weight="self_tuned",
                 graph_symmetrize="max", sigma_w=None, self_tuned_constant=3.0,
                 n_landmarks=None, drop_rr=False,
                 n_subsets=1, unlabeled_policy="auto", class_mass_normalization=False,
                 solver="auto", rtol=1e-6, random_state=None, n_jobs=None):
        store_init_arguments(self, locals())
