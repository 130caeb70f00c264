"""The docstring sections the four kernel machines (KRR, SVM, LapRLS, LapSVM) share: their
common parameters and attributes, written once (numpydoc)."""

from __future__ import annotations

__all__ = ["machine_docstring"]

# The parameters and attributes the four kernel machines share, documented once (numpydoc
# sections; each class adds its own head and tail with machine_docstring).
_SHARED_DOCS = """\
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
    fit_intercept : bool, default={intercept_default}
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
    optimizer : {"auto", "newton", "active-set"}, default="auto"
        Optimizer for losses without a closed form (dense backend and the l-point problem
        of ``formulation="deformed"``): ``"newton"`` (damped Newton with an exact line
        search, the reference), ``"active-set"`` (Huber / squared hinge without a graph: a
        box-constrained active-set method whose m free points solve an m x m system) or
        ``"auto"`` (active-set where it applies, Newton elsewhere). All reach the same
        minimizer to round-off.
    solver : str, default="deprecated"
        Former name of ``optimizer`` (deprecated: a ``DeprecationWarning``; ``solver``
        names the Laplacian solve of the propagation learners).
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

"""


def machine_docstring(head, tail, intercept_default):
    """A kernel machine's docstring: its own ``head`` (summary, objective, its parameters),
    the shared parameters and attributes, its own ``tail`` (See Also, Notes, References)."""
    return head + _SHARED_DOCS.replace("{intercept_default}", intercept_default) + tail
