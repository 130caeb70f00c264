"""The deformed kernel of manifold regularization: LapRLS / LapSVM as kernel machines on L.

Sindhwani, Niyogi & Belkin (2005, "Beyond the point cloud", Theorem 2.1): the objective of
manifold regularization over n = l + u points with graph regularizer Q,

    (1/l) sum_{j in L} ell(y_j, f(x_j)) + gamma_A ||f||_K^2 + gamma_I / n^2 f_S^T Q f_S,

equals ``(1/l) sum_L ell + gamma_A ||f||_{K~}^2`` in the RKHS of the deformed kernel

    K~(x, z) = K(x, z) - k_S(x)^T (I + r Q K_SS)^{-1} r Q k_S(z),   r = gamma_I / (n^2 gamma_A),

whose Gram matrix on the sample is ``K~_SS = (I + r K Q)^{-1} K``. The representer theorem
in that space puts the solution on the labeled points alone, ``f = sum_{j in L} beta_j
K~(., x_j)``: every manifold-regularized learner is the supervised learner with the same loss
and ``gamma_A`` on the l x l Gram ``K~_LL``. Predictions at new points need
``K~(x, X_L) = k(x, X_L) - k_S(x)^T G`` with ``G = r Q K~_{S,L}`` (n x l, kept), so the
solution is also ``f = k_S(.)^T alpha`` with ``alpha = E_L beta - G beta``: the n-space
coefficients of the full problem.

Routes to ``K~_{S,L}`` (:class:`DeformedKernel`, ``route=``):

* ``"dense"``: one LU factorization of ``I + r K Q`` and l right-hand sides, O(n^3) per r
  (the points ordered labeled last, so ``K~_LL`` alone needs only the trailing l x l block
  of the back-substitution);
* ``"spectral"``: ``K = U Lam U^T`` and ``P = Lam^{1/2} U^T Q U Lam^{1/2} = V mu V^T`` once per
  (kernel, graph); with ``Z = V^T Lam^{1/2} U^T``, ``K~ = Z^T diag(1 / (1 + r mu)) Z`` and every
  further r costs O(n^2 l) (grids over gamma_I / gamma_A);
* ``"nystrom"``: ``K ~ V V^T`` (n x c) gives ``K~ ~ V (I_c + r V^T Q V)^{-1} V^T`` in
  O(nnz(Q) c + n c^2 + c^3), never an n x n matrix; this is exactly the kernel of the
  learners' nystrom backend.

Because ``K~`` does not depend on which labels are known, hiding the labels of a fold (the
transductive protocol of cross-validation) leaves it unchanged: exact t-fold CV of any
manifold-regularized learner is one ``K~`` and t supervised refits of size about l.

References
----------
Sindhwani, V., Niyogi, P., Belkin, M. (2005). Beyond the point cloud: from transductive to
semi-supervised learning. ICML.
Belkin, M., Niyogi, P., Sindhwani, V. (2006). Manifold regularization. JMLR 7.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg import blas, lapack

from fastgssl._memory import check_dense_memory
from fastgssl._sparse_blocks import sparse_dense_product
from fastgssl._threads import factorization_blas, small_blas
from fastgssl._validation import check_X
from fastgssl.exceptions import IllConditionedKernelWarning
from fastgssl.kernels._pairwise import check_kernel, pairwise_kernel

__all__ = ["DeformedKernel", "IllConditionedKernelWarning", "warn_if_ill_conditioned"]

_ROUTES = ("auto", "dense", "spectral", "nystrom")


def _apply(Q, M, rows=None, out=None):
    """Q @ M (``Q[rows] @ M``) for a sparse matrix, dense array or LinearOperator Q (M
    dense, 2-D), into ``out`` when given."""
    return sparse_dense_product(Q, M, rows=rows, out=out)


def _asymmetry(Q):
    """``max |Q - Q^T|`` of a CSR matrix: entry by entry when the transpose has the same
    pattern (a graph regularizer; no sparse subtraction), else through ``Q - Q^T``."""
    Q = Q.copy()
    Q.sum_duplicates()  # canonical: sorted indices, no duplicates
    T = Q.T.tocsr()
    T.sum_duplicates()
    if np.array_equal(Q.indptr, T.indptr) and np.array_equal(Q.indices, T.indices):
        return float(np.abs(Q.data - T.data).max()) if Q.nnz else 0.0
    diff = abs(Q - T)
    return float(diff.max()) if diff.nnz else 0.0


def _check_regularizer(Q, n):
    if Q is None:
        return None
    if getattr(Q, "shape", None) != (n, n):
        raise ValueError(
            f"regularizer Q must have shape ({n}, {n}) over all training points, got "
            f"{getattr(Q, 'shape', None)}."
        )
    if sp.issparse(Q):
        Q = sp.csr_matrix(Q, dtype=np.float64)
        if not np.isfinite(Q.data).all():
            raise ValueError("regularizer Q contains NaN or infinite entries.")
        gap = _asymmetry(Q)
        scale = max(1.0, abs(Q).max() if Q.nnz else 0.0)
        if gap > 1e-10 * scale:
            raise ValueError(
                f"regularizer Q must be symmetric (largest |Q - Q^T| = {gap:.3g})."
            )
    elif isinstance(Q, np.ndarray):
        Q = np.asarray(Q, dtype=np.float64)
        if not np.isfinite(Q).all():
            raise ValueError("regularizer Q contains NaN or infinite entries.")
    return Q


class DeformedKernel:
    """Deformed kernel ``K~`` of manifold regularization on the labeled points.

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly", "precomputed"} or callable, default="rbf"
        Base kernel K (see :func:`fastgssl.kernels.pairwise_kernel`); ``"precomputed"``:
        ``fit`` takes the (n, n) Gram matrix and :meth:`transform` the (m, n) kernel between
        new and training points.
    sigma : float > 0, default=1.0
        RBF bandwidth (papers' convention ``exp(-||x - z||^2 / (2 sigma))``).
    kernel_params : dict, optional
        ``degree`` / ``coef0`` of ``"poly"``, keyword arguments of a callable.
    route : {"auto", "dense", "spectral", "nystrom"}, default="auto"
        How ``K~`` is computed (module docstring). ``"auto"``: ``"dense"``; the grid search
        picks ``"spectral"`` when a kernel and graph serve several ratios r.
    n_components : int, default=300
        Nystrom landmarks (``route="nystrom"``).
    landmarks : {"uniform", "kmeans++"}, default="uniform"
    random_state : int, RandomState or None
        Nystrom landmark sampling.

    Attributes
    ----------
    labeled_index_ : ndarray of int, shape (l,)
    n_samples_ : int
    route_ : str
        The route used.
    kernel_train_ : ndarray of shape (n, n) or None
        Base Gram matrix (dense and spectral routes).
    nystrom_ : NystromFactor or None
        The factor V (nystrom route).
    gram_norm_ : float
        ``||K~_LL||_1`` of the last ``K~_LL`` computed (checked PSD to round-off).

    Notes
    -----
    With ``r = 0`` (or no regularizer) ``K~ = K``: the learner is the supervised one.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.graphs import knn_graph
    >>> from fastgssl.kernels import DeformedKernel
    >>> from fastgssl.regularizers import laplacian
    >>> X = np.random.default_rng(0).normal(size=(40, 2))
    >>> Q = laplacian(knn_graph(X, 5))
    >>> dk = DeformedKernel(sigma=1.0).fit(X, Q, labeled=np.arange(6))
    >>> K_SL, K_LL = dk.gram(r=0.1)
    >>> K_SL.shape, K_LL.shape
    ((40, 6), (6, 6))
    >>> bool(np.allclose(dk.transform(X[:6], r=0.1), K_LL))
    True
    """

    def __init__(self, kernel="rbf", *, sigma=1.0, kernel_params=None, route="auto",
                 n_components=300, landmarks="uniform", random_state=None):
        self.kernel = kernel
        self.sigma = sigma
        self.kernel_params = kernel_params
        self.route = route
        self.n_components = n_components
        self.landmarks = landmarks
        self.random_state = random_state

    # ---- setup ------------------------------------------------------------------------
    def fit(self, X, Q, labeled, *, base_gram=None, factor=None):
        """Factor what does not depend on r.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n, d), or (n, n) Gram matrix
            Training points (labeled and unlabeled), or the Gram matrix for
            ``kernel="precomputed"``.
        Q : sparse matrix, ndarray or LinearOperator of shape (n, n), or None
            Symmetric positive semi-definite graph regularizer (L, L_norm, L^p, plugins).
        labeled : array-like of bool of shape (n,), or of int
            Mask or indices of the labeled points.
        base_gram : ndarray of shape (n, n), optional
            The base Gram matrix when the caller already has it (not copied).
        factor : NystromFactor or ndarray of shape (n, c), optional
            A Nystrom factor, or its features ``V`` alone, to use (``route="nystrom"``)
            instead of sampling one; with bare features :meth:`transform` is unavailable.

        Returns
        -------
        self
        """
        if self.route not in _ROUTES:
            raise ValueError(f"route must be one of {list(_ROUTES)}, got {self.route!r}.")
        self._params = check_kernel(self.kernel, self.kernel_params)
        if self.kernel == "rbf" and not (np.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"sigma must be a finite number > 0, got {self.sigma!r}.")
        if base_gram is None and factor is None:
            X = check_X(X, "X", accept_sparse=True)
        n = X.shape[0] if X is not None else (base_gram if factor is None else factor).shape[0]
        labeled = np.asarray(labeled)
        if labeled.dtype == bool:
            if labeled.shape != (n,):
                raise ValueError(f"labeled must be a mask of shape ({n},), got {labeled.shape}.")
            lab_idx = np.flatnonzero(labeled)
        else:
            lab_idx = np.asarray(labeled, dtype=np.intp)
            if lab_idx.ndim != 1 or (lab_idx.size and (lab_idx.min() < 0 or lab_idx.max() >= n)):
                raise ValueError(f"labeled indices must lie in [0, {n}).")
        if lab_idx.size == 0:
            raise ValueError("labeled marks no point; the deformed kernel lives on L.")
        if np.unique(lab_idx).size != lab_idx.size:
            raise ValueError("labeled indices must be distinct (each labeled point once).")
        self.Q_ = self._checked_regularizer(Q, n)
        self.labeled_index_ = lab_idx
        self.n_samples_ = n
        route = "dense" if self.route == "auto" else self.route
        if factor is not None:
            route = "nystrom"
        self.route_ = route
        self.X_fit_ = X
        self.kernel_train_ = None
        self.nystrom_ = None
        self._cache = {}
        if route == "nystrom":
            if factor is None:
                if callable(self.kernel) or self.kernel in ("linear", "poly"):
                    raise ValueError(
                        f"route='nystrom' supports kernel='rbf' or 'precomputed', got "
                        f"{self.kernel!r}; use route='dense' or 'spectral'."
                    )
                from fastgssl.kernels._nystrom import nystrom

                factor = nystrom(X, self.n_components,
                                 sigma=self.sigma if self.kernel == "rbf" else 1.0,
                                 landmarks=self.landmarks, random_state=self.random_state,
                                 kernel=self.kernel)
            self.nystrom_ = factor
            V = np.asarray(getattr(factor, "features_", factor), dtype=np.float64)
            self._VtQV = None if self.Q_ is None else V.T @ _apply(self.Q_, V)
            return self
        if base_gram is not None:
            K = np.asarray(base_gram, dtype=np.float64)
        elif self.kernel == "precomputed":
            if X.shape != (n, n):
                raise ValueError(
                    f"with kernel='precomputed', X must be the (n, n) Gram matrix; got {X.shape}."
                )
            K = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        else:
            _check_dense_memory(n, 3 if route == "spectral" else 2)
            K = pairwise_kernel(X, kernel=self.kernel, sigma=self.sigma,
                                kernel_params=self._params)
        if not np.isfinite(K).all():
            raise ValueError("the base kernel matrix holds NaN or infinite values.")
        self.kernel_train_ = K
        self._KQ = self._system = self._lu = self._rhs = None  # the work arrays stay
        if route == "spectral":
            self._spectral_setup(K)
        return self

    def _checked_regularizer(self, Q, n):
        """``_check_regularizer(Q, n)``, skipped when this object checked the same sparse Q
        (same object, same stored entries) at its previous fit: a grid search refits one
        object per kernel width with the graph's one regularizer."""
        if not sp.issparse(Q):
            return _check_regularizer(Q, n)
        stamp = (Q.shape, Q.nnz, hash(np.asarray(Q.data).tobytes()),
                 hash(np.asarray(getattr(Q, "indices", Q.nnz)).tobytes()))
        memo = self.__dict__.get("_regularizer_memo")
        if memo is not None and memo[0] is Q and memo[1] == stamp and Q.shape == (n, n):
            return memo[2]
        checked = _check_regularizer(Q, n)
        self._regularizer_memo = (Q, stamp, checked)
        return checked

    def _features(self):
        """The Nystrom features V (nystrom route), from a factor or a bare array."""
        return np.asarray(getattr(self.nystrom_, "features_", self.nystrom_), dtype=np.float64)

    def _spectral_setup(self, K):
        lam, U = np.linalg.eigh(K)
        if lam[0] < -1e-8 * max(lam[-1], 1e-300):
            raise ValueError(
                f"route='spectral' needs a positive semi-definite base kernel; its smallest "
                f"eigenvalue is {lam[0]:.3g} (largest {lam[-1]:.3g})."
            )
        root = np.sqrt(np.clip(lam, 0.0, None))
        R = U * root  # U Lam^{1/2}
        if self.Q_ is None:
            mu, Vm = np.zeros(len(lam)), np.eye(len(lam))
        else:
            P = R.T @ _apply(self.Q_, R)
            P = 0.5 * (P + P.T)
            mu, Vm = np.linalg.eigh(P)
            # round-off of R^T Q R scales with ||K|| ||Q||, not with P's own largest
            # eigenvalue (tiny when the graph's weights are: then P is round-off itself)
            q_norm = (float(abs(self.Q_).sum(axis=1).max()) if sp.issparse(self.Q_)
                      and self.Q_.nnz else 0.0)
            _check_psd(mu, "the regularizer restricted to the kernel's range",
                       scale=lam[-1] * q_norm)
            mu = np.clip(mu, 0.0, None)
        self._mu = mu
        self._Z = Vm.T @ R.T  # Z = V^T Lam^{1/2} U^T, K~ = Z^T diag(1/(1 + r mu)) Z
        self._ZL = np.ascontiguousarray(self._Z[:, self.labeled_index_])

    # ---- K~ on the sample -----------------------------------------------------------------
    def _check_r(self, r):
        r = float(r)
        if not (np.isfinite(r) and r >= 0):
            raise ValueError(f"r = gamma_i / (n^2 gamma_a) must be finite and >= 0, got {r!r}.")
        if not hasattr(self, "labeled_index_"):
            raise ValueError("this DeformedKernel is not fitted; call fit(X, Q, labeled) first.")
        return 0.0 if self.Q_ is None else r

    def sample_block(self, r):
        """``K~_{S,L}``: the deformed kernel between all n training points and L (n x l).

        For the nystrom route this is ``V M^{-1} V_L^T`` with ``M = I + r V^T Q V``.
        """
        r = self._check_r(r)
        if r in self._cache and self._cache[r][0] is not None:
            return self._cache[r][0]
        L = self.labeled_index_
        if self.route_ == "nystrom":
            self.labeled_gram(r)
            KSL = self._features() @ self._cache[r][2]
            self._cache[r] = (KSL,) + self._cache[r][1:]
            return KSL
        if r == 0:
            KSL = self.kernel_train_[:, L].copy()
        elif self.route_ == "spectral":
            d = 1.0 / (1.0 + r * self._mu)
            KSL = self._Z.T @ (d[:, None] * self._ZL)
        else:
            lu, y = self._dense_forward(r)
            with small_blas(float(self.n_samples_) ** 2 * L.size):
                x = blas.dtrsm(1.0, lu, y, lower=0)  # the whole back-substitution
            KSL = np.empty_like(x)
            KSL[self._perm] = x  # back from the labeled-last order
        KLL = KSL[L]
        self._store(r, KSL, KLL)
        return KSL

    def _store(self, r, KSL, KLL):
        """Symmetrize and check ``K~_LL``, keep the blocks of this r (one r at a time: n x l
        memory)."""
        KLL = 0.5 * (KLL + KLL.T)
        with small_blas(KLL.shape[0] ** 3 / 3):
            self.gram_norm_ = _check_gram(KLL, r)
        self._cache = {r: (KSL, KLL, None)}
        return KLL

    def _dense_forward(self, r):
        """Dense route: the LU factors of ``I + r K' Q'`` and the forward solution
        ``y = L^{-1} P K'_{S,L}``, with the points reordered labeled last (``'``: the
        symmetric permutation ``perm``).

        In that order the last l unknowns, ``K~_LL``, need only the trailing l x l block of
        U: :meth:`labeled_gram` skips the other rows of the back-substitution (half of the
        solve), :meth:`sample_block` does all of it. The factors stay in the workspace until
        the next ratio; ``K' Q'`` is formed once per fit, and the n x n buffer of the system
        is reused across ratios (a fresh array per r costs its page faults).
        """
        if self._lu is not None and self._lu[0] == r:
            return self._system.T, self._lu[1]
        K, L = self.kernel_train_, self.labeled_index_
        n, l = K.shape[0], L.size
        if self._KQ is None:  # ratio-independent: once per fit
            rest = np.ones(n, dtype=bool)
            rest[L] = False
            self._perm = perm = np.concatenate([np.flatnonzero(rest), L])
            # K[:, perm] into the system's buffer, then T = Q' K' = Q[perm] K[:, perm], so
            # K' Q' = T^T (Q, K symmetric); both buffers are kept across fits of this object
            # (a grid search refits one per kernel width: fresh n x n arrays cost their page
            # faults, about a third of the time of a 400 x 400 LU)
            self._system = np.take(K, perm, axis=1, out=self._buffer("system", n),
                                   mode="clip")
            self._KQ = _apply(self.Q_, self._system, rows=perm, out=self._buffer("KQ", n))
            self._rhs = K[np.ix_(L, perm)].T  # K'_{S,L} (Fortran order), every ratio's
        A = self._system
        np.multiply(self._KQ, r, out=A)  # C order: A^T = r K' Q', Fortran-ordered
        A = A.T
        A.ravel(order="K")[:: n + 1] += 1.0  # the diagonal, through a view
        # small factorizations on one BLAS thread: on a loaded machine the per-panel
        # barriers of a threaded getrf cost more than they gain; large ones too (OpenBLAS's
        # threaded getrf crashed at n = 21,669: factorization_blas)
        with factorization_blas(n, 2.0 * n**3 / 3 + 2.0 * n * n * l):
            lu, piv, _ = lapack.dgetrf(A, overwrite_a=True)  # in place (Fortran order)
            # a singular system shows as non-finite K~_LL, refused by _check_gram
            rhs = lapack.dlaswp(self._rhs, piv)  # P K'_{S,L} (a copy), Fortran order
            y = blas.dtrsm(1.0, lu, rhs, lower=1, diag=1, overwrite_b=True)
        self._lu = (r, y)
        return lu, y

    def _buffer(self, name, n):
        """An n x n C-ordered work array, reused across fits of this object."""
        buffers = self.__dict__.setdefault("_buffers", {})
        if name not in buffers or buffers[name].shape != (n, n):
            buffers[name] = np.empty((n, n))
        return buffers[name]

    def release_workspace(self):
        """Drop the n x n arrays kept for further ratios (``K' Q'`` and the buffer of the
        system, with its factors): a fitted learner keeps its deformed kernel for one ratio,
        whose blocks stay cached; another ratio recomputes them."""
        self._KQ = self._system = self._lu = self._rhs = None
        self._buffers, self._regularizer_memo = {}, None

    def gram(self, r):
        """``(K~_{S,L}, K~_LL)``: the n x l block and the symmetric l x l Gram of L."""
        KSL = self.sample_block(r)
        return KSL, self._cache[self._check_r(r)][1]

    def labeled_gram(self, r):
        """``K~_LL`` alone (l x l), what cross-validation needs.

        The nystrom route forms it as ``V_L M^{-1} V_L^T`` in O(c^3 + l c^2) without the
        n x l block; the other routes take it from :meth:`sample_block`.
        """
        r = self._check_r(r)
        if r in self._cache:
            return self._cache[r][1]
        if self.route_ == "dense" and r > 0:
            L = self.labeled_index_
            n, l = self.n_samples_, L.size
            lu, y = self._dense_forward(r)
            with small_blas(float(l) ** 3):  # the trailing l x l block of U only
                KLL = blas.dtrsm(1.0, lu[n - l:, n - l:], y[n - l:], lower=0)
            # rows and columns in the order of L (the permutation's tail is L as given)
            KLL = self._store(r, None, KLL)
            return KLL
        if self.route_ != "nystrom":
            return self.gram(r)[1]
        V_L = self._features()[self.labeled_index_]
        M = np.eye(V_L.shape[1])
        if r > 0:
            M += r * self._VtQV
        M = 0.5 * (M + M.T)
        c, l = V_L.shape[1], V_L.shape[0]
        with small_blas(c**3 / 3 + 2 * c * c * l):  # small: one BLAS thread (no barriers)
            MinvVL = sla.solve(M, V_L.T, assume_a="pos", check_finite=False)
            KLL = V_L @ MinvVL
            KLL = 0.5 * (KLL + KLL.T)
            self.gram_norm_ = _check_gram(KLL, r)
        self._cache = {r: (None, KLL, MinvVL)}  # the n x l block is formed on demand
        return KLL

    def coupling(self, r):
        """``G = r Q K~_{S,L}`` (n x l): ``K~(x, X_L) = k(x, X_L) - k_S(x)^T G``."""
        r = self._check_r(r)
        KSL = self.sample_block(r)
        if r == 0:
            return np.zeros_like(KSL)
        return r * _apply(self.Q_, KSL)

    def expansion(self, beta, r):
        """Coefficients of ``f = sum_{j in L} beta_j K~(., x_j)`` in the base parametrization.

        Returns the n-space ``alpha = E_L beta - G beta`` (``f(x) = k_S(x)^T alpha``) for the
        dense and spectral routes, and the Nystrom weights ``w = M^{-1} V_L^T beta``
        (``f(x) = v(x)^T w``) for the nystrom route.
        """
        beta = np.asarray(beta, dtype=np.float64)
        r = self._check_r(r)
        if self.route_ == "nystrom":
            self.labeled_gram(r)
            return self._cache[r][2] @ beta
        alpha = -(self.coupling(r) @ beta)
        alpha[self.labeled_index_] += beta
        return alpha

    # ---- new points -----------------------------------------------------------------------
    def transform(self, X_new, r):
        """``K~(x, X_L)`` for new points (m x l).

        Parameters
        ----------
        X_new : ndarray or sparse matrix of shape (m, d)
            New points; ``kernel="precomputed"``: their kernel with the n training points.
        r : float
        """
        r = self._check_r(r)
        X_new = check_X(X_new, "X", accept_sparse=True)
        L = self.labeled_index_
        if self.route_ == "nystrom":
            self.labeled_gram(r)
            return self.nystrom_.transform(X_new) @ self._cache[r][2]
        if self.kernel == "precomputed":
            if X_new.shape[1] != self.n_samples_:
                raise ValueError(
                    f"with kernel='precomputed', X must be the kernel between the new points "
                    f"and the {self.n_samples_} training points; got {X_new.shape[1]} columns."
                )
            kS = X_new.toarray() if sp.issparse(X_new) else np.asarray(X_new, dtype=np.float64)
        else:
            kS = pairwise_kernel(X_new, self.X_fit_, self.kernel, sigma=self.sigma,
                                 kernel_params=self._params)
        out = kS[:, L].copy()
        if r > 0:
            out -= kS @ self.coupling(r)
        return out


def _check_psd(eigenvalues, what, scale=0.0):
    """Refuse eigenvalues below ``-1e-8`` times the larger of their own magnitude and
    ``scale`` (the size round-off is measured against)."""
    top = max(float(np.max(np.abs(eigenvalues))), float(scale), 1e-300)
    if eigenvalues.min() < -1e-8 * top:
        raise ValueError(
            f"{what} is not positive semi-definite (smallest eigenvalue "
            f"{eigenvalues.min():.3g}, largest {eigenvalues.max():.3g}); a graph regularizer "
            f"must be PSD (check a plugin regularizer)."
        )


def _check_gram(KLL, r):
    """K~_LL must be finite and PSD to round-off (one Cholesky test, O(l^3 / 3)).

    Returns the largest eigenvalue bound ``||K~_LL||_1`` used by
    :func:`warn_if_ill_conditioned`.
    """
    if not np.isfinite(KLL).all():
        raise ValueError(
            f"the deformed Gram matrix at r = {r:.3g} holds NaN or infinite values (is "
            f"I + r K Q singular? check the regularizer and the kernel)."
        )
    norm1 = float(np.abs(KLL).sum(axis=0).max()) if KLL.size else 0.0
    shifted = KLL.copy()
    shifted.flat[:: KLL.shape[0] + 1] += 1e-8 * max(norm1, 1e-300)
    try:
        sla.cholesky(shifted, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:
        _check_psd(np.linalg.eigvalsh(KLL), f"the deformed Gram matrix K~_LL at r = {r:.3g}")
    return norm1


def warn_if_ill_conditioned(norm1, mu, what, stacklevel=3):
    """Warn when ``K~_LL + mu I`` (the supervised system on L) may be numerically singular:
    its condition number is at most ``1 + ||K~_LL||_1 / mu``."""
    bound = 1.0 + norm1 / mu if mu > 0 else np.inf
    if bound > 1e12:
        warnings.warn(
            f"{what}: the system K~_LL + mu I with mu = {mu:.3g} and ||K~_LL||_1 = "
            f"{norm1:.3g} may be numerically singular (condition number up to "
            f"{bound:.3g}); the fit can lose accuracy. Increase gamma_a (lam).",
            IllConditionedKernelWarning,
            stacklevel=stacklevel,
        )


def _check_dense_memory(n, n_arrays):
    """Refuse an (n, n) route that cannot fit, before allocating (nystrom is the way out)."""
    check_dense_memory(n, n, n_arrays, what="the deformed kernel (dense route)",
                       remedy="use backend='nystrom' (route='nystrom') or fewer points")
