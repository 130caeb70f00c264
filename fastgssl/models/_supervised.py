"""The supervised kernel machines: KRR / LSSVM (square loss) and SVM (Huber-smoothed hinge),
the ``gamma_i = 0`` case of :class:`fastgssl.models._kernel_machine._KernelMachine`."""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from fastgssl._validation import check_positive
from fastgssl.models._kernel_machine import (
    _COMMON_CONSTRAINTS,
    _POSITIVE,
    _TASKS,
    _check_choice,
    _KernelMachine,
)

__all__ = ["KRR", "SVM"]


class KRR(_KernelMachine):
    """Kernel ridge regression (square loss); LSSVM is the same model.

    Minimizes the papers' mean form (Liu et al. (2018))::

        (1/n) sum_i (y_i - f(x_i))^2 + lam ||f||_K^2,

    so that ``alpha = (K + n lam I)^{-1} y`` (one Cholesky factorization). The least-squares
    SVM (LSSVM, Suykens) without bias is exactly this model fitted to +-1 targets: use
    ``task="classification"``.

    Parameters
    ----------
    lam : float > 0, default=1e-3
        Regularization. scikit-learn's ``KernelRidge(alpha=n * lam, kernel="rbf",
        gamma=1 / (2 * sigma))`` fits the same function (its objective is the sum form
        ``sum_i (y_i - f_i)^2 + alpha ||f||^2``).
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    loss : str or Loss, default="square"
        Any registered loss; non-square losses are fitted by Newton's method.
    task : {"regression", "classification"}, default="regression"
        ``"classification"`` encodes two labels of any values as +-1 (LSSVM) and more labels
        one-vs-rest, sharing one factorization.

    kernel : {"rbf", "linear", "poly", "precomputed"} or callable, default="rbf"
        ``"rbf"``: ``exp(-||x - x'||^2 / (2 sigma))``; ``"linear"``: ``<x, x'>``; ``"poly"``:
        ``(<x, x'> / sigma + coef0) ** degree``; a callable ``(X, Z, **kernel_params) -> K``;
        ``"precomputed"``: X is the Gram matrix in ``fit`` and the kernel between new and
        training points in ``predict`` (as scikit-learn's SVC).
    kernel_params : dict, optional
        ``degree`` (3) and ``coef0`` (1.0) of ``"poly"``; keyword arguments of a callable.
    backend : {"dense", "nystrom"}, default="dense"
        ``"dense"``: exact, ``f = K alpha`` over the training points (O(n^2) memory, O(n^3)
        time). ``"nystrom"``: ``f = V w`` in ``n_components`` Nystrom features (O(n c) memory,
        O(n c^2) time), never an n x n matrix.
    n_components : int, default=300
        Number of Nystrom landmarks (nystrom backend).
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Landmark sampling of the nystrom backend.
    loss_params : dict, optional
        Extra parameters of the loss.
    tol : float, default=1e-10
        Newton stops when the largest coefficient change is below ``tol`` times the largest
        coefficient (closed forms ignore it).
    max_iter : int, default=100
        Newton iterations per output column; a ConvergenceWarning gives the numbers otherwise.
    random_state : int, RandomState or None
        Seeds the Nystrom landmarks.
    probability : bool, default=False
        Classifiers: calibrate :meth:`predict_proba` by Platt scaling on the out-of-fold
        decision values of exact transductive 5-fold CV run inside ``fit`` (t extra refits
        of size about l; see :meth:`predict_proba`).
    fit_intercept : bool, default=True
        Add an intercept as the weight of a constant feature: the kernel becomes
        ``k(x, z) + intercept_scaling**2`` (the nystrom backend gets one more feature), so
        the intercept is regularized with the kernel term, as liblinear's is, and every CV
        method and the deformed-kernel reduction see one kernel. The default was chosen by
        measurement (``docs/benchmarks_cv.md``, seed 001 sets: True for KRR / SVM, which
        closes the gap to SVC on ionosphere; False for LapRLS / LapSVM, the papers' form).
    intercept_scaling : float > 0, default=1.0
        Value of the constant feature; larger values penalize the intercept less.
    class_weight : dict, "balanced" or None, default=None
        Classification: the loss of a point of class c is weighted by ``class_weight[c]``
        (classes missing from the dict weigh 1); ``"balanced"`` uses ``l / (k l_c)`` over
        the l labeled points of k classes (``l_c`` of class c), as scikit-learn's SVC does.
        The weights multiply ``sample_weight`` of :meth:`fit`, and the data term becomes the
        weighted mean ``sum_L w_i loss_i / sum_L w_i`` (so integer weights equal repeated
        points, and "balanced" keeps the normalization ``sum_L w_i = l``). One-vs-rest
        columns weigh a point by the class of its label in every column. Exact CV refits
        recompute "balanced" from the labels each fold keeps, as a refit does.
    multi_class : {"ovr", "ovo"}, default="ovr"
        More than two classes: ``"ovr"`` fits one +-1 problem per class on all labeled
        points (decision: the largest); ``"ovo"`` fits one problem per class pair on the
        labeled points of its two classes, with the pair's data term summed and divided by
        the same l (libsvm's one C for every pair: ``SVM(lam, multi_class="ovo")`` is
        ``SVC(C=1 / (2 n lam))`` pair by pair), and decides by votes. Decision values keep
        the one-vs-rest shape (SVC's ``decision_function_shape="ovr"``: votes plus the
        summed pairwise values squashed into (-1/3, 1/3)); ``dual_coef_`` / ``coef_`` have
        one column per pair. Exact CV and the grid search support both; the first-order
        approximations (bif, fbif, newton, exact-quadratic) need ``"ovr"``. See
        :mod:`fastgssl.models._multiclass`.
    solver : {"auto", "newton", "active-set"}, default="auto"
        Optimizer for losses without a closed form (dense backend and the l-point problem
        of ``formulation="deformed"``): ``"newton"`` (damped Newton with an exact line
        search, the reference), ``"active-set"`` (Huber / squared hinge without a graph: a
        box-constrained active-set method whose m free points solve an m x m system) or
        ``"auto"`` (active-set where it applies, Newton elsewhere). All reach the same
        minimizer to round-off.
    warm_start : bool, default=False
        Dense backend, non-quadratic losses: start Newton from the previous fit's
        ``dual_coef_`` (when its shape matches) instead of the square-loss solution. A path
        over decreasing regularization (what :class:`fastgssl.cv.GridSearchCV` does)
        then needs fewer Newton steps and skips the O(n^3) square-loss start.

    Attributes
    ----------
    X_fit_ : ndarray or sparse matrix
        Training points, or the Gram matrix when ``kernel="precomputed"``.
    n_features_in_ : int
    labeled_mask_ : ndarray of bool, shape (n,)
    y_train_ : ndarray of shape (n,) or (n, n_classes)
        Encoded targets: +-1 (binary; +1 is ``classes_[1]``), one +-1 column per class
        (multi-class one-vs-rest) or real values (regression); 0 at unlabeled points.
    classes_ : ndarray (classification only)
    task_ : {"classification", "regression"}
    loss_ : fastgssl.losses.Loss
    kernel_train_ : ndarray of shape (n, n) or None
        Kernel matrix of the training points (dense backend), None for nystrom.
    nystrom_ : fastgssl.kernels.NystromFactor or None
        The factor ``V`` (``nystrom_.features_``) for the nystrom backend, else None.
    graph_ : scipy.sparse.csr_matrix or None
        Affinity W over all training points (None when ``gamma_i == 0``).
    laplacian_ : scipy.sparse.csr_matrix, LinearOperator or None
        The regularizer Q = regularizer(W): CSR, or the registry's matrix-free operator for
        ``power >= 3`` (None when ``gamma_i == 0``).
    dual_coef_ : ndarray of shape (n,), (n, n_classes) or (n, n_pairs)
        Expansion coefficients alpha, ``f = K alpha`` (dense backend only).
    coef_ : ndarray of shape (r,), (r, n_classes) or (r, n_pairs)
        Weights w of the Nystrom features, ``f = V w`` (nystrom backend only).
    decision_train_ : ndarray, shape of ``y_train_``
        f at the n training points.
    deformed_kernel_ : fastgssl.kernels.DeformedKernel or None
        The deformed kernel of the fit (``formulation="deformed"`` with a graph), else None.
    deformed_coef_ : ndarray of shape (l,), (l, n_classes) or (l, n_pairs), or None
        ``beta`` of ``f = sum_{j in L} beta_j K~(., x_j)`` (``formulation="deformed"``).
    gamma_a_, gamma_i_ : float
        The regularization of the papers' objective that was fitted (KRR / SVM: ``lam`` and 0).
    multi_class_ : {"ovr", "ovo"}
        The coding fitted: ``"ovo"`` for ``multi_class="ovo"`` with more than two
        classes (coefficients: one column per class pair, ``n_pairs = k (k - 1) / 2``),
        else ``"ovr"``.
    n_iter_ : int
        Newton iterations (largest over output columns; 1 for a closed form: one solve).

    See Also
    --------
    LapRLS : the same learner with a graph term over unlabeled points.
    SVM : the Huber-hinge counterpart.
    sklearn.kernel_ridge.KernelRidge : the sum-form equivalent (``alpha = n lam``).

    Notes
    -----
    The supervised case of :class:`LapRLS`: ``gamma_a = lam``, ``gamma_i = 0``, every point
    labeled. The papers have no intercept; ``fit_intercept=True`` (the default) adds a
    regularized one as a constant feature, ``fit_intercept=False`` is the papers' model.

    References
    ----------
    Suykens, J. A. K., Vandewalle, J. (1999). Least squares support vector machine
    classifiers. Neural Processing Letters 9.
    Liu, Y., Jiang, S., Liao, S. (2014). Efficient approximation of cross-validation for
    kernel methods using Bouligand influence function. ICML.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.models import KRR
    >>> X = np.linspace(0, 3, 30)[:, None]
    >>> model = KRR(lam=1e-4, sigma=0.5).fit(X, np.sin(X).ravel())
    >>> bool(abs(model.predict([[1.5]])[0] - np.sin(1.5)) < 1e-2)
    True
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "lam": [_POSITIVE],
        "task": [StrOptions(set(_TASKS))],
    }

    def __init__(self, lam=1e-3, sigma=1.0, *, kernel="rbf", kernel_params=None, loss="square",
                 loss_params=None, task="regression", backend="dense", n_components=300,
                 landmarks="uniform", tol=1e-10, max_iter=100, random_state=None,
                 warm_start=False, solver="auto",
                 probability=False, fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr"):
        self.lam = lam
        self.sigma = sigma
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.loss = loss
        self.loss_params = loss_params
        self.task = task
        self.backend = backend
        self.n_components = n_components
        self.landmarks = landmarks
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.warm_start = warm_start
        self.solver = solver
        self.probability = probability
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.multi_class = multi_class

    def _regularization(self):
        return check_positive(self.lam, "lam"), 0.0

    def _task(self, y):
        return _check_choice(self.task, "task", _TASKS)

    def _declared_task(self):
        return self.task if self.task in _TASKS else None


class SVM(_KernelMachine):
    """Support vector machine with the Huber-smoothed hinge loss (Liu et al. (2018)).

    Minimizes ``(1/n) sum_i ell_h(y_i f(x_i)) + lam ||f||_K^2`` with the Huber hinge ``ell_h``
    (it tends to the hinge as ``h -> 0``) by Newton's method with a line search.
    Two labels of any values are encoded +-1; more labels one-vs-rest, or one-vs-one
    with ``multi_class="ovo"``.

    Parameters
    ----------
    lam : float > 0, default=1e-3
        Regularization. For the hinge (``h -> 0``) this is scikit-learn's
        ``SVC(C=1 / (2 n lam), kernel="rbf", gamma=1 / (2 sigma))``: dividing the objective
        by ``2 lam`` gives ``(1/2) ||f||^2 + C sum_i hinge`` (SVC's intercept is unpenalized,
        ours, ``fit_intercept``, is penalized with ``||f||^2``).
    h : float > 0, default=0.05
        Half-width of the quadratic zone of the Huber hinge.
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    loss : str or Loss, default="huber_hinge"
        Any registered loss (``h`` is passed to ``huber_hinge`` only).

    kernel : {"rbf", "linear", "poly", "precomputed"} or callable, default="rbf"
        ``"rbf"``: ``exp(-||x - x'||^2 / (2 sigma))``; ``"linear"``: ``<x, x'>``; ``"poly"``:
        ``(<x, x'> / sigma + coef0) ** degree``; a callable ``(X, Z, **kernel_params) -> K``;
        ``"precomputed"``: X is the Gram matrix in ``fit`` and the kernel between new and
        training points in ``predict`` (as scikit-learn's SVC).
    kernel_params : dict, optional
        ``degree`` (3) and ``coef0`` (1.0) of ``"poly"``; keyword arguments of a callable.
    backend : {"dense", "nystrom"}, default="dense"
        ``"dense"``: exact, ``f = K alpha`` over the training points (O(n^2) memory, O(n^3)
        time). ``"nystrom"``: ``f = V w`` in ``n_components`` Nystrom features (O(n c) memory,
        O(n c^2) time), never an n x n matrix.
    n_components : int, default=300
        Number of Nystrom landmarks (nystrom backend).
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Landmark sampling of the nystrom backend.
    loss_params : dict, optional
        Extra parameters of the loss.
    tol : float, default=1e-10
        Newton stops when the largest coefficient change is below ``tol`` times the largest
        coefficient (closed forms ignore it).
    max_iter : int, default=100
        Newton iterations per output column; a ConvergenceWarning gives the numbers otherwise.
    random_state : int, RandomState or None
        Seeds the Nystrom landmarks.
    probability : bool, default=False
        Classifiers: calibrate :meth:`predict_proba` by Platt scaling on the out-of-fold
        decision values of exact transductive 5-fold CV run inside ``fit`` (t extra refits
        of size about l; see :meth:`predict_proba`).
    fit_intercept : bool, default=True
        An intercept as the weight of a constant feature (as for KRR); see :class:`KRR`.
    intercept_scaling : float > 0, default=1.0
        As in :class:`KRR`.
    class_weight : dict, "balanced" or None, default=None
        Loss weights per class, as in :class:`KRR`.
    multi_class : {"ovr", "ovo"}, default="ovr"
        One-vs-rest or one-vs-one for more than two classes, as in :class:`KRR`.
    solver : {"auto", "newton", "active-set"}, default="auto"
        Optimizer for losses without a closed form (dense backend and the l-point problem
        of ``formulation="deformed"``): ``"newton"`` (damped Newton with an exact line
        search, the reference), ``"active-set"`` (Huber / squared hinge without a graph: a
        box-constrained active-set method whose m free points solve an m x m system) or
        ``"auto"`` (active-set where it applies, Newton elsewhere). All reach the same
        minimizer to round-off.
    warm_start : bool, default=False
        Dense backend, non-quadratic losses: start Newton from the previous fit's
        ``dual_coef_`` (when its shape matches) instead of the square-loss solution. A path
        over decreasing regularization (what :class:`fastgssl.cv.GridSearchCV` does)
        then needs fewer Newton steps and skips the O(n^3) square-loss start.

    Attributes
    ----------
    X_fit_ : ndarray or sparse matrix
        Training points, or the Gram matrix when ``kernel="precomputed"``.
    n_features_in_ : int
    labeled_mask_ : ndarray of bool, shape (n,)
    y_train_ : ndarray of shape (n,) or (n, n_classes)
        Encoded targets: +-1 (binary; +1 is ``classes_[1]``), one +-1 column per class
        (multi-class one-vs-rest) or real values (regression); 0 at unlabeled points.
    classes_ : ndarray (classification only)
    task_ : {"classification", "regression"}
    loss_ : fastgssl.losses.Loss
    kernel_train_ : ndarray of shape (n, n) or None
        Kernel matrix of the training points (dense backend), None for nystrom.
    nystrom_ : fastgssl.kernels.NystromFactor or None
        The factor ``V`` (``nystrom_.features_``) for the nystrom backend, else None.
    graph_ : scipy.sparse.csr_matrix or None
        Affinity W over all training points (None when ``gamma_i == 0``).
    laplacian_ : scipy.sparse.csr_matrix, LinearOperator or None
        The regularizer Q = regularizer(W): CSR, or the registry's matrix-free operator for
        ``power >= 3`` (None when ``gamma_i == 0``).
    dual_coef_ : ndarray of shape (n,), (n, n_classes) or (n, n_pairs)
        Expansion coefficients alpha, ``f = K alpha`` (dense backend only).
    coef_ : ndarray of shape (r,), (r, n_classes) or (r, n_pairs)
        Weights w of the Nystrom features, ``f = V w`` (nystrom backend only).
    decision_train_ : ndarray, shape of ``y_train_``
        f at the n training points.
    deformed_kernel_ : fastgssl.kernels.DeformedKernel or None
        The deformed kernel of the fit (``formulation="deformed"`` with a graph), else None.
    deformed_coef_ : ndarray of shape (l,), (l, n_classes) or (l, n_pairs), or None
        ``beta`` of ``f = sum_{j in L} beta_j K~(., x_j)`` (``formulation="deformed"``).
    gamma_a_, gamma_i_ : float
        The regularization of the papers' objective that was fitted (KRR / SVM: ``lam`` and 0).
    multi_class_ : {"ovr", "ovo"}
        The coding fitted: ``"ovo"`` for ``multi_class="ovo"`` with more than two
        classes (coefficients: one column per class pair, ``n_pairs = k (k - 1) / 2``),
        else ``"ovr"``.
    n_iter_ : int
        Newton iterations (largest over output columns; 1 for a closed form: one solve).

    See Also
    --------
    LapSVM : the same learner with a graph term over unlabeled points.
    KRR : the square-loss counterpart.
    sklearn.svm.SVC : the hinge-loss SVM with an intercept (``C = 1 / (2 n lam)``).

    Notes
    -----
    The supervised case of :class:`LapSVM` (``gamma_a = lam``, ``gamma_i = 0``, all points
    labeled). The dense Newton step only factorizes the block of the points with positive
    curvature (the margin points ``|1 - y f| <= h``): O(n m + m^3) for m such points.

    References
    ----------
    Chapelle, O. (2007). Training a support vector machine in the primal. Neural
    Computation 19.
    Liu, Y., Jiang, S., Liao, S. (2014). Efficient approximation of cross-validation for
    kernel methods using Bouligand influence function. ICML.
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, "lam": [_POSITIVE], "h": [_POSITIVE]}

    def __init__(self, lam=1e-3, h=0.05, sigma=1.0, *, kernel="rbf", kernel_params=None,
                 loss="huber_hinge", loss_params=None, backend="dense", n_components=300,
                 landmarks="uniform", tol=1e-10, max_iter=100, random_state=None,
                 warm_start=False, solver="auto",
                 probability=False, fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr"):
        self.lam = lam
        self.h = h
        self.sigma = sigma
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.loss = loss
        self.loss_params = loss_params
        self.backend = backend
        self.n_components = n_components
        self.landmarks = landmarks
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.warm_start = warm_start
        self.solver = solver
        self.probability = probability
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.multi_class = multi_class

    def _regularization(self):
        return check_positive(self.lam, "lam"), 0.0

    def _task(self, y):
        return "classification"

    def _declared_task(self):
        return "classification"
