"""Data-dependent kernels in nearly-linear time (Lever, Diethe & Shawe-Taylor 2012).

The semi-supervised kernel of Sindhwani et al. (2005) deforms a base kernel ``K`` with an
intrinsic regularizer ``h^T Q h`` over all ``n`` points (Q from a graph: L, L_norm, L^p):

    K_tilde(x, x') = K(x, x') - eta k_x^T (I + eta Q K)^{-1} Q k_x'           (O(n^3))

Seed 002 measures functions only at a subsample ``s_1..s_m`` (``m = n_subsample << n``) and
uses the regularizer ``Q_hat = (Q^+ restricted to the subsample)^+``, whose pseudo-inverse
``A = Q^+[S, S]`` costs ``m`` sparse Laplacian solves ``Q z_i = e_{s_i}`` (``A = Z^T Q Z``):

    K_breve(x, x') = K(x, x') - eta k_hat(x)^T (A + eta K_hat)^{-1} k_hat(x')

with ``k_hat(x) = (K(x_{s_1}, x), ..., K(x_{s_m}, x))`` and ``K_hat = K[S, S]`` (Lever et
al. 2012; the paper's proof of its Theorem 4.3 prints ``+ eta``, the sign is minus). A new
point needs only ``m`` base-kernel evaluations. :class:`DataDependentKernel` builds the graph
and ``Q`` from the registry, runs all ``m`` solves through one
:class:`fastgssl.solvers.LaplacianSolver` set-up (``p`` chained solves for ``Q = R^p``) and
exposes the kernel through :meth:`gram`, a callable kernel for scikit-learn
(``SVC(kernel=ddk.gram)``) and for ``kernel="precomputed"`` models.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg import LinAlgWarning, lapack
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from fastgssl._components import component_labels
from fastgssl._geometry import check_distance_scale
from fastgssl._sparse_blocks import sparse_dense_product, spmm_rows
from fastgssl._threads import numba_threads
from fastgssl._validation import MAX_POWER, check_finite_result, check_random_state, check_X
from fastgssl.kernels._rbf import default_sigma, rbf_kernel

__all__ = ["DataDependentKernel"]

# A candidate null vector v of R (R v = ridge v) is accepted when ||R v - ridge v|| is below
# this multiple of ||R||_inf ||v||: exact graph null vectors leave only round-off.
_NULL_RTOL = 1e-10
# Row blocks for products with the n x m block Z: bounds the block x m temporaries.
_ROW_BLOCK = 4096
# Largest n x batch right-hand-side block handed to one LaplacianSolver.solve call (256 MB).
_MAX_BATCH_ELEMENTS = 1 << 25

_POSITIVE = Interval(Real, 0, None, closed="neither")


class DataDependentKernel(BaseEstimator):
    """Semi-supervised kernel ``K_breve`` of Lever et al. (2012) from ``m`` Laplacian solves.

    Parameters
    ----------
    eta : float > 0, default=1.0
        Weight of the intrinsic regularizer in the RKHS norm,
        ``||h||^2 = ||h||_K^2 + eta h_hat^T Q_hat h_hat`` (the paper's timing runs use 1;
        its experiments choose eta by cross-validation).
    n_subsample : int, default=250
        ``m_hat``: number of points at which functions are measured (the paper uses 250 and
        500 for MNIST, 40 of 1,000 for two-moons clustering). Cost: ``m * p`` solves,
        ``O(n m^2 + m^3)`` dense algebra, ``O(n m)`` memory.
    regularizer : str, default="L_norm"
        Registry name in group ``fastgssl.regularizers``: ``"L"`` (``D - W``) or ``"L_norm"``
        (``I - D^{-1/2} W D^{-1/2}``, the paper's classification choice) or a plugin.
    power : int in [1, 100], default=1
        ``p`` in ``Q = (R + ridge I)^p`` (iterated Laplacian; the paper selects p by
        cross-validation and uses p = 2 for clustering). Costs ``p`` chained solves.
    ridge : float >= 0, default=1e-6
        ``delta`` in ``R + delta I`` ("a small ridge term" in the paper). With ``ridge=0`` the
        kernel is the limit ``delta -> 0+`` (see Notes).
    graph : str or callable, default="knn"
        Registry name in group ``fastgssl.graphs`` or a callable ``X -> W`` returning a
        symmetric sparse weight matrix.
    n_neighbors : int, default=5
        Neighbours of the kNN graph (paper: k = 5).
    sigma_w : float or None, default=None
        Bandwidth of Gaussian edge weights (``graph_weight="gaussian"``).
    graph_weight : {"binary", "gaussian", "distance"}, default="binary"
        Edge weights of the kNN graph (paper: 0-1 weights).
    sigma : float > 0 or None, default=None
        Bandwidth of the base RBF kernel ``exp(-||x - x'||^2 / (2 sigma))`` (papers'
        convention: a squared distance). None: median heuristic
        (:func:`fastgssl.kernels.default_sigma`, "a common heuristic" in the paper).
    labeled_share : float in [0, 1], default=0.5
        When ``fit`` gets ``y``, up to ``floor(labeled_share * n_subsample)`` subsample places
        go to labeled points (all of them if there are fewer), the rest are drawn uniformly
        among the other points: the paper's "strong bias to the labeled data" that still
        leaves labeled points outside the subsample when there are many.
    solver : {"auto", "amg", "cg", "direct"}, default="auto"
        Method of :class:`fastgssl.solvers.LaplacianSolver`.
    rtol : float > 0, default=1e-8
        Relative residual tolerance of the Laplacian solves.
    graph_params : dict or None, default=None
        Extra keyword arguments for the graph builder (e.g. for ``"epsilon"``).
    random_state : int, RandomState or None, default=None
        Seeds the subsample and the median heuristic.

    Attributes
    ----------
    subsample_indices_ : ndarray of int, shape (m,)
        Rows of the training ``X`` that form the subsample.
    subsample_X_ : ndarray or CSR matrix of shape (m, n_features)
    labeled_in_subsample_ : int
        How many subsample points are labeled (0 without ``y``).
    sigma_ : float
        Base-kernel bandwidth used.
    regularizer_ : scipy.sparse.csr_matrix of shape (n, n)
        ``R = L + ridge I`` (or ``L_norm + ridge I``); ``Q = R^power``.
    null_space_dim_ : int
        Number of graph components whose null vector was deflated (see Notes).
    A_ : ndarray of shape (m, m)
        ``Z^T Q Z``, equal to ``Q^{-1}[S, S]`` to solver tolerance (``Q^+[S, S]`` when
        ``ridge=0``).
    solver_info_ : list of fastgssl.solvers.SolveInfo
        One per batched solve call: ``power`` chained calls over all ``m`` columns (the
        columns are split into batches only when ``n * m > 2**25``).
    n_features_in_ : int

    Notes
    -----
    Fit, with ``E = [e_{s_1} ... e_{s_m}]`` and ``Q = R^p``:

    1. ``W`` from the graph builder, ``R`` from the regularizer (registry), both sparse.
    2. Null vectors. ``R`` has eigenvalue ``delta`` on the null vectors of the Laplacian (one
       per connected component ``c``: ``1_c`` for ``L``, ``D^{1/2} 1_c`` for ``L_norm``);
       with orthonormal ``U`` of those, ``Q^{-1} = P Q^{-1} P + delta^{-p} U U^T`` with
       ``P = I - U U^T``. The solves only see the projected right-hand sides,
       ``R^p Z = P E`` (``p`` chained batched solves, each result re-projected), so their
       conditioning is that of ``R`` on the complement of its null space and does not
       depend on ``delta``; the ``delta^{-p}`` part is added in closed form.
    3. ``A_perp = Z^T R^p Z`` without forming ``R^p``: ``Y = R^{floor(p/2)} Z`` by sparse
       products, then ``Y^T Y`` (p even) or ``Y^T R Y`` (p odd). Then
       ``A = A_perp + delta^{-p} C C^T`` with ``C = U[S, :]``.
    4. ``M_0 = A_perp + eta K_hat = L_0 L_0^T`` (Cholesky; if LAPACK's condition estimate
       is beyond round-off, an eigen-decomposition with clipped eigenvalues and a warning
       that reports them) and, by Woodbury for the ``delta^{-p}`` term,

           (A + eta K_hat)^{-1} = M_0^{-1} - M_0^{-1} C (delta^p I + C^T M_0^{-1} C)^{-1}
                                   C^T M_0^{-1},

       so ``K_breve(X1, X2) = K(X1, X2) - eta (B_1^T B_2 - H_1^T H_2)`` with
       ``B = L_0^{-1} k_hat`` and ``H = L_S^{-1} F^T B`` (``F = L_0^{-1} C``,
       ``L_S L_S^T = delta^p I + F^T F``). Computed this way the kernel stays exact
       for tiny ``delta`` and large ``p``, where ``A`` itself has entries ``~ delta^{-p}``.

    ``ridge=0`` gives the ``delta -> 0+`` limit (``delta^p I`` drops out of ``L_S``): functions
    constant on a graph component are not penalized, as with ``Q = L`` in Sindhwani et al.,
    and the regularizer on the subsample is the generalized Schur complement of Lever et
    al.'s (2012) Theorem 3.2 (minimum-energy interpolation). ``A_`` is then ``Q^+[S, S]``,
    whose literal inverse would instead penalize constants.

    Cost: graph + ``p m`` solves (one preconditioner set-up) + ``O(p nnz(R) m + n m^2 + m^3)``;
    never an ``n x n`` dense matrix. :meth:`gram` costs ``O((n_1 + n_2) m d + n_1 n_2 m)``.

    References
    ----------
    G. Lever, T. Diethe, J. Shawe-Taylor. Data-dependent kernels in nearly-linear time.
    AISTATS 2012. V. Sindhwani, P. Niyogi, M. Belkin. Beyond the point cloud: from
    transductive to semi-supervised learning. ICML 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from fastgssl.kernels import DataDependentKernel
    >>> X, _ = make_moons(300, noise=0.05, random_state=0)
    >>> ddk = DataDependentKernel(eta=10.0, n_subsample=30, random_state=0).fit(X)
    >>> G = ddk.gram(X[:5])
    >>> G.shape, bool(np.allclose(G, G.T))
    ((5, 5), True)
    """

    # scikit-learn's parameter constraints (BaseEstimator._validate_params at fit); the checks
    # against the data (n_subsample <= n_samples, the graph's shape) stay in fit. Each power
    # is one more chained Laplacian solve per subsample point, hence the bound MAX_POWER.
    _parameter_constraints = {
        "eta": [_POSITIVE],
        "n_subsample": [Interval(Integral, 1, None, closed="left")],
        "regularizer": [str, callable],
        "power": [Interval(Integral, 1, MAX_POWER, closed="both")],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "graph": [str, callable, "sparse matrix", np.ndarray],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "sigma_w": [_POSITIVE, None],
        "graph_weight": [StrOptions({"binary", "gaussian", "distance"})],
        "sigma": [_POSITIVE, None],
        "labeled_share": [Interval(Real, 0, 1, closed="both")],
        "solver": [StrOptions({"auto", "amg", "cg", "direct"})],
        "rtol": [_POSITIVE],
        "graph_params": [dict, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        eta=1.0,
        n_subsample=250,
        regularizer="L_norm",
        power=1,
        ridge=1e-6,
        graph="knn",
        n_neighbors=5,
        sigma_w=None,
        graph_weight="binary",
        sigma=None,
        labeled_share=0.5,
        solver="auto",
        rtol=1e-8,
        graph_params=None,
        random_state=None,
    ):
        self.eta = eta
        self.n_subsample = n_subsample
        self.regularizer = regularizer
        self.power = power
        self.ridge = ridge
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.sigma_w = sigma_w
        self.graph_weight = graph_weight
        self.sigma = sigma
        self.labeled_share = labeled_share
        self.solver = solver
        self.rtol = rtol
        self.graph_params = graph_params
        self.random_state = random_state

    # ------------------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Build the graph, the regularizer, the ``m`` Green's-function columns and the factor.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            All points, labeled and unlabeled: they all shape the graph.
        y : array-like of shape (n_samples,), optional
            Labels with ``-1`` (classification) or ``NaN`` (regression) for unlabeled points;
            only used to bias the subsample towards labeled points.

        Returns
        -------
        self
        """
        self._validate_params()
        eta, ridge, rtol = float(self.eta), float(self.ridge), float(self.rtol)
        power, share = int(self.power), float(self.labeled_share)
        X = check_X(X, "X", min_samples=2)
        check_distance_scale(X, name="X")
        n = X.shape[0]
        m = int(self.n_subsample)
        if m > n:
            raise ValueError(
                f"n_subsample={m} exceeds the number of samples ({n}); use at most {n} "
                f"(n_subsample = n gives the full construction of Sindhwani et al.)."
            )
        labeled = _labeled_mask(y, n)
        rng = check_random_state(self.random_state)

        self.sigma_ = (
            default_sigma(X, random_state=rng.randint(2**31 - 1))
            if self.sigma is None
            else float(self.sigma)
        )
        S = _select_subsample(n, m, labeled, share, rng)

        W = self._build_graph(X)
        R = self._build_regularizer(W, ridge)
        U = _null_space_basis(W, R, ridge)
        # the solves and the energy Gram run on R in a bandwidth-reducing order (cache
        # locality of the sparse products); A = Z^T R^p Z does not depend on the order
        order, inverse = _locality_order(R)
        R_ord = sp.csr_matrix(R)[order][:, order].tocsr()
        U_ord = sp.csr_matrix(U)[order]
        solver = _make_laplacian_solver(R_ord, U_ord, ridge, self.solver, rtol)
        Z, infos = _green_columns(solver, U_ord, inverse[S], n, power)
        A_perp = _energy_gram(R_ord, Z, power)
        del Z
        C = np.asarray(U[S].toarray()) if U.shape[1] else np.zeros((m, 0))
        C = C[:, np.abs(C).sum(axis=0) > 0]  # components without subsample points drop out

        X_sub = X[S]
        K_hat = rbf_kernel(X_sub, sigma=self.sigma_)
        whiten_t, deflate = _factor(A_perp, K_hat, C, eta, ridge, power)

        self.subsample_indices_ = S
        self.subsample_X_ = X_sub
        self.labeled_in_subsample_ = int(labeled[S].sum()) if labeled is not None else 0
        self.regularizer_ = R
        self.null_space_dim_ = int(U.shape[1])
        self.A_ = A_perp + (ridge ** (-power)) * (C @ C.T) if ridge > 0 else A_perp
        self.solver_info_ = infos
        self.n_features_in_ = X.shape[1]
        self._eta = eta
        self._whiten_t = whiten_t
        self._deflate = deflate
        return self

    def _build_graph(self, X):
        from fastgssl.graphs import resolve_graph

        params = {}
        if isinstance(self.graph, str) and self.graph in ("knn", "nndescent", "ivf"):
            params = {"n_neighbors": self.n_neighbors, "weight": self.graph_weight,
                      "sigma_w": self.sigma_w}
        params.update(self.graph_params or {})
        return resolve_graph(self.graph, X, builder_params=params)

    def _build_regularizer(self, W, ridge):
        from fastgssl.regularizers import build_regularizer

        return build_regularizer(self.regularizer, W, ridge=ridge, require_sparse=True)

    # ------------------------------------------------------------------------------------
    def gram(self, X1, X2=None):
        """Kernel matrix ``K_breve(X1, X2)`` between any two point sets.

        Parameters
        ----------
        X1 : array-like or sparse matrix of shape (n1, n_features)
        X2 : array-like or sparse matrix of shape (n2, n_features), optional
            Defaults to ``X1`` (the result is then exactly symmetric).

        Returns
        -------
        K : ndarray of shape (n1, n2)
            A float when both inputs are single 1-D points (scikit-learn's per-pair callable
            convention, as used by ``KernelRidge(kernel=callable)``).

        Notes
        -----
        Only the base kernel between the points and the ``m`` subsample points, and between
        the two sets, is evaluated: ``O((n1 + n2) m d + n1 n2 (m + d))``.
        """
        check_is_fitted(self, "_whiten_t")
        scalar = np.ndim(X1) == 1 and (X2 is None or np.ndim(X2) == 1)
        X1 = self._check_points(X1, "X1")
        symmetric = X2 is None
        X2 = X1 if symmetric else self._check_points(X2, "X2")
        K = rbf_kernel(X1, None if symmetric else X2, sigma=self.sigma_)
        k1 = rbf_kernel(self.subsample_X_, X1, sigma=self.sigma_)
        k2 = k1 if symmetric else rbf_kernel(self.subsample_X_, X2, sigma=self.sigma_)
        B1 = self._whiten_t @ k1
        B2 = B1 if symmetric else self._whiten_t @ k2
        K -= self._eta * (B1.T @ B2)
        if self._deflate.shape[0]:
            H1 = self._deflate @ k1
            H2 = H1 if symmetric else self._deflate @ k2
            K += self._eta * (H1.T @ H2)
        if symmetric:
            K = 0.5 * (K + K.T)
        check_finite_result(K, "DataDependentKernel.gram",
                            hint="increase ridge or lower power / eta, or rescale X")
        return float(K[0, 0]) if scalar else K

    def __call__(self, X1, X2=None):
        """Alias of :meth:`gram`, so a fitted kernel can be passed where a callable is expected."""
        return self.gram(X1, X2)

    def _check_points(self, X, name):
        if not sp.issparse(X) and np.ndim(X) == 1:
            X = np.asarray(X, dtype=np.float64).reshape(1, -1)
        X = check_X(X, name)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"{name} has {X.shape[1]} features but the kernel was fitted with "
                f"{self.n_features_in_}."
            )
        return X


# ----------------------------------------------------------------------------------------
# The pieces of fit, as plain functions (the tests compare each with a dense reference)
# ----------------------------------------------------------------------------------------
def _labeled_mask(y, n):
    """Boolean mask of labeled points (``-1`` or ``NaN`` mark unlabeled), or None.

    Only the mask matters here (it biases the subsample), so any labels are accepted,
    including none at all.
    """
    if y is None:
        return None
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1 or len(y) != n:
        raise ValueError(
            f"y must be 1-D with one entry per row of X ({n}), got shape {y.shape}."
        )
    if y.dtype.kind == "f":
        nan = np.isnan(y)
        # NaN present: the regressors' convention (a target of -1.0 is a real value);
        # otherwise the classifiers' -1.
        return ~nan if nan.any() else y != -1
    if y.dtype.kind in "iub":
        return y != -1
    return np.array([str(v) != "-1" for v in y], dtype=bool)


def _select_subsample(n, m, labeled, labeled_share, rng):
    """``m`` distinct indices: up to ``floor(share m)`` labeled ones, the rest uniform."""
    if labeled is None:
        return np.sort(rng.choice(n, m, replace=False))
    lab = np.flatnonzero(labeled)
    n_lab = min(lab.size, int(np.floor(labeled_share * m)))
    chosen = rng.choice(lab, n_lab, replace=False) if n_lab else np.empty(0, dtype=np.intp)
    rest = np.setdiff1d(np.arange(n), chosen, assume_unique=True)
    others = rng.choice(rest, m - n_lab, replace=False)
    return np.sort(np.concatenate([chosen, others]).astype(np.intp))


def _null_space_basis(W, R, ridge):
    """Orthonormal sparse ``U`` (n x r): null vectors of the Laplacian, ``R u = ridge u``.

    Candidates per connected component of ``W``: ``1_c`` (``L = D - W``) and
    ``D^{1/2} 1_c`` (``L_norm``); a component is deflated by the first candidate that ``R``
    maps to ``ridge`` times itself up to round-off. A regularizer without such vectors (a
    plugin) is simply not deflated.
    """
    n = W.shape[0]
    n_comp, comp = component_labels(W)
    degree = np.asarray(W.sum(axis=1)).ravel()
    scale = max(float(abs(R).sum(axis=1).max()), np.finfo(float).tiny)
    value = np.zeros(n)
    accepted = np.zeros(n_comp, dtype=bool)
    for cand in (np.ones(n), np.sqrt(np.maximum(degree, 0.0))):
        resid = R @ cand - ridge * cand
        res2 = np.bincount(comp, weights=resid * resid, minlength=n_comp)
        norm2 = np.bincount(comp, weights=cand * cand, minlength=n_comp)
        ok = (norm2 > 0) & (res2 <= (_NULL_RTOL * scale) ** 2 * norm2) & ~accepted
        take = ok[comp]
        value[take] = cand[take] / np.sqrt(norm2[comp[take]])
        accepted |= ok
    keep = np.flatnonzero(accepted)
    col = np.full(n_comp, -1)
    col[keep] = np.arange(keep.size)
    rows = np.flatnonzero(accepted[comp])
    return sp.csr_matrix((value[rows], (rows, col[comp[rows]])), shape=(n, keep.size))


def _locality_order(R):
    """Reverse Cuthill-McKee order of ``R``'s graph and its inverse permutation.

    Neighbours in the graph become neighbours in memory, so the gathers of the sparse
    products in the block CG and the energy Gram hit cache more often (George & Liu,
    *Computer Solution of Large Sparse Positive Definite Systems*, 1981, ch. 4).  Costs
    ``O(nnz)`` (0.05 s at 64,000 points); measured 10-30 % off the solves at 16,000-64,000
    points of a 50-d mixture's kNN graph.
    """
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    n = R.shape[0]
    order = np.asarray(reverse_cuthill_mckee(sp.csr_matrix(R), symmetric_mode=True),
                       dtype=np.intp)
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = np.arange(n)
    return order, inverse


def _project_out(B, U):
    """``B - U (U^T B)`` in place (``U`` orthonormal, sparse)."""
    if U.shape[1]:
        B -= U @ (U.T @ B)
    return B


def _make_laplacian_solver(R, U, ridge, method, rtol):
    """One solver set-up for ``R``.

    With ``ridge = 0``, ``R`` is singular and the solver gets the null space ``U`` (it then
    returns pseudo-inverse solutions). With ``ridge > 0``, ``R`` is nonsingular and ``U`` is an
    eigenspace of it: the right-hand sides are projected off ``U`` here, so the solver works
    on the complement, where the conditioning does not depend on the ridge.
    """
    from fastgssl.solvers import LaplacianSolver

    null_space = U.toarray() if (ridge == 0 and U.shape[1]) else None
    # the solver's own panel width (LaplacianSolver's block_size: about 2^17 / n columns,
    # at least 10); on a machine loaded beyond its cores narrower panels lose (many short
    # parallel calls, each waiting for a descheduled thread: 16 columns 5x slower at load 6)
    return LaplacianSolver(R, solver=method, rtol=rtol, null_space=null_space)


def _green_columns(solver, U, S, n, power):
    """``Z = R^{-p} P E``: ``p`` chained batched solves, re-projected after each one.

    The columns go through the one solver set-up in as few batched calls as memory allows:
    all ``m`` at once unless ``n m`` exceeds ``_MAX_BATCH_ELEMENTS`` (the block CG keeps
    about five ``n x batch`` arrays).
    """
    m = S.size
    batch = max(1, min(m, _MAX_BATCH_ELEMENTS // max(n, 1)))
    Z = np.empty((n, m))
    infos = []
    for start in range(0, m, batch):
        stop = min(m, start + batch)
        Zb = np.zeros((n, stop - start))
        Zb[S[start:stop], np.arange(stop - start)] = 1.0
        for _ in range(power):
            Zb, info = solver.solve(_project_out(Zb, U))
            infos.append(info)
        Z[:, start:stop] = Zb
    return _project_out(Z, U), infos


def _energy_gram(R, Z, power):
    """``Z^T R^p Z`` from sparse products only; symmetric PSD by construction.

    Odd ``p``: ``Y = R^{(p-1)/2} Z`` and ``A = sum_blocks Y[rows]^T (R[rows] Y)`` over
    blocks of ``_ROW_BLOCK`` rows, so the sparse product is formed a row block at a time
    (a ``block x m`` temporary, contiguous) and each block's contribution is one GEMM:
    ``O(nnz(R) m + n m^2)`` with streaming memory access.
    """
    Y = np.ascontiguousarray(Z)
    with numba_threads(None):
        for _ in range(power // 2):
            Y = sparse_dense_product(R, Y)
        m = Y.shape[1]
        if power % 2 == 0:
            A = Y.T @ Y
        else:
            Rc = sp.csr_matrix(R)
            data = Rc.data.astype(np.float64)
            indices = Rc.indices.astype(np.int64)
            A = np.zeros((m, m))
            n = Y.shape[0]
            tmp = np.empty((min(n, _ROW_BLOCK), m))
            for r0 in range(0, n, _ROW_BLOCK):
                r1 = min(n, r0 + _ROW_BLOCK)
                RY = tmp[:r1 - r0]
                spmm_rows(Rc.indptr, indices, data, np.arange(r0, r1), Y, RY)
                A += Y[r0:r1].T @ RY
    return 0.5 * (A + A.T)


def _factor(A_perp, K_hat, C, eta, ridge, power):
    """Factors of ``(A_perp + delta^{-p} C C^T + eta K_hat)^{-1}``: ``(whiten^T, deflate)``.

    ``M_0 = A_perp + eta K_hat = L_0 L_0^T`` (Cholesky, with LAPACK's condition estimate;
    an eigen-decomposition with clipped eigenvalues and a warning when ``M_0`` is
    numerically singular); ``whiten^T = L_0^{-1}``, so ``M_0^{-1} = whiten whiten^T``.
    Woodbury for the ``delta^{-p} C C^T`` term gives ``deflate = L_S^{-1} F^T whiten^T``
    with ``F = whiten^T C`` and ``L_S L_S^T = delta^p I + F^T F``.
    """
    M0 = A_perp + eta * K_hat
    M0 = 0.5 * (M0 + M0.T)
    m = M0.shape[0]
    floor = m * np.finfo(float).eps
    whiten_t = None
    try:
        L0 = sla.cholesky(M0, lower=True)
        rcond, _ = lapack.dpocon(L0, float(np.abs(M0).sum(axis=0).max()), uplo="L")
        if rcond > floor:
            whiten_t = sla.solve_triangular(L0, np.eye(m), lower=True)
    except sla.LinAlgError:
        pass
    if whiten_t is None:
        lam, V = sla.eigh(M0)
        lam_max = float(lam[-1])
        warnings.warn(
            f"A + eta K_hat restricted to the complement of the graph null space is "
            f"numerically singular: eigenvalues in [{lam[0]:.3g}, {lam_max:.3g}] "
            f"(condition number {lam_max / max(lam[0], np.finfo(float).tiny):.3g}); "
            f"{int(np.sum(lam <= floor * lam_max))} eigenvalue(s) were raised to "
            f"{floor * lam_max:.3g}. Increase eta or sigma, or use fewer subsample points "
            f"(duplicate points in the subsample make K_hat singular).",
            LinAlgWarning,
            stacklevel=3,
        )
        lam = np.maximum(lam, floor * lam_max)
        whiten_t = (V / np.sqrt(lam)).T
    if C.shape[1] == 0:
        return whiten_t, np.zeros((0, m))
    F = whiten_t @ C
    S = F.T @ F
    if ridge > 0:
        S[np.diag_indices_from(S)] += ridge**power
    L_S = sla.cholesky(S, lower=True)
    deflate = sla.solve_triangular(L_S, F.T, lower=True) @ whiten_t
    return whiten_t, deflate
