"""Graph Laplacians L = D - W and L_norm = I - D^{-1/2} W D^{-1/2}, shifted and iterated.

The regularizers of manifold regularization (Belkin, Niyogi & Sindhwani 2006) and of the
data-dependent kernel of Lever et al. (2012) (the design notes): ``Q = (L + ridge I)^p``
or ``Q = (L_norm + ridge I)^p``, as an explicit sparse matrix for small ``p`` or as a
matrix-free :class:`LaplacianPower` operator.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from scipy.sparse.linalg import LinearOperator

from fastgssl._components import component_labels
from fastgssl._threads import numba_threads
from fastgssl._validation import MAX_POWER, check_bounded_int, check_positive
from fastgssl.graphs import check_adjacency

KINDS = ("L", "L_norm")
# "auto" forms L^p explicitly up to this power: nnz(L^2) ~ n k^2 is still affordable,
# nnz(L^3) ~ n k^3 usually is not (and every product costs more than p mat-vecs).
MAX_EXPLICIT_POWER = 2


def connected_components(W):
    """Connected components of the undirected graph ``W``.

    Returns
    -------
    n_components : int
    labels : ndarray of shape (n,), int32
        Component of every vertex, numbered from 0 in order of first appearance.
    """
    return component_labels(W)


def _check_kind_power_ridge(kind, power, ridge):
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}.")
    power = check_bounded_int(
        power, "power", low=1, high=MAX_POWER,
        hint=" Every power is one more product with L per mat-vec (and one more chained "
             "solve); powers beyond a few tens only cost time and accuracy.",
    )
    ridge = check_positive(ridge, "ridge", strict=False)
    return int(power), ridge


# ``L = D - W`` of a canonical W in one compiled pass (issue 54): the entries and order of
# scipy's ``diags(d + ridge) - W``, which a first fit formed in a difference, a duplicate
# sum and a sort


@njit(cache=True, parallel=True)
def _laplacian_rows(indptr, indices, data, deg, ridge):
    n = indptr.shape[0] - 1
    below = np.zeros(n, dtype=np.int64)  # stored entries left of the diagonal
    count = np.zeros(n + 1, dtype=np.int64)
    bad = np.zeros(n, dtype=np.bool_)
    for i in prange(n):
        b = 0
        kept = 0
        prev = -1
        for jj in range(indptr[i], indptr[i + 1]):
            j = indices[jj]
            if j <= prev or j == i:  # unsorted, a duplicate or a stored diagonal
                bad[i] = True
            prev = j
            if j < i:
                b += 1
            if data[jj] != 0.0:
                kept += 1
        below[i] = b
        count[i + 1] = kept + (1 if deg[i] + ridge != 0.0 else 0)
    if bad.any():
        return False, count, indices[:0], data[:0]
    out_ptr = np.cumsum(count)
    out_idx = np.empty(out_ptr[n], dtype=indices.dtype)
    out_val = np.empty(out_ptr[n])
    for i in prange(n):
        o = out_ptr[i]
        lo = indptr[i]
        d = deg[i] + ridge
        for jj in range(lo, indptr[i + 1]):
            if jj == lo + below[i] and d != 0.0:
                out_idx[o] = i
                out_val[o] = d
                o += 1
            if data[jj] != 0.0:  # (scipy's difference drops what cancels to 0)
                out_idx[o] = indices[jj]
                out_val[o] = -data[jj]
                o += 1
        if below[i] == indptr[i + 1] - lo and d != 0.0:  # the diagonal comes last
            out_idx[o] = i
            out_val[o] = d
    return True, out_ptr, out_idx, out_val


def laplacian_arrays(W, deg, ridge=0.0):
    """CSR arrays ``(indptr, indices, data)`` of ``D - W + ridge I`` for a CSR ``W`` and its
    degrees ``deg`` (the entries and order of scipy's canonical ``diags(deg + ridge) - W``:
    stored zeros of ``W`` and a zero diagonal are not stored); None when a row of ``W`` is
    unsorted or holds a duplicate or a diagonal entry."""
    with numba_threads(None):  # the cores other jobs leave free (fastgssl._threads)
        ok, indptr, indices, data = _laplacian_rows(
            W.indptr, W.indices, np.asarray(W.data, dtype=np.float64),
            np.asarray(deg, dtype=np.float64), float(ridge))
    return (indptr, indices, data) if ok else None


def _base_laplacian(W, kind, ridge):
    """``L + ridge I`` or ``L_norm + ridge I`` as CSR; also the degrees."""
    n = W.shape[0]
    deg = np.asarray(W.sum(axis=1)).ravel()
    if kind == "L":
        # one compiled pass for a W with sorted rows (the same entries as below)
        arrays = laplacian_arrays(W, deg, ridge) if W.nnz else None
        if arrays is not None:
            indptr, indices, data = arrays
            R = sp.csr_matrix((data, indices, indptr), shape=(n, n))
            R.has_canonical_format = True
            return R, deg
        R = sp.diags(deg + ridge) - W
    else:
        isolated = deg == 0
        n_iso = int(isolated.sum())
        if n_iso:
            warnings.warn(
                f"laplacian(kind='L_norm'): {n_iso} isolated vertices (degree 0); their rows "
                f"and columns of L_norm are set to 0 (as in L = D - W, so each stays its own "
                f"connected component with null vector e_i). Connect them (larger "
                f"n_neighbors / eps) or add a ridge.",
                UserWarning,
                stacklevel=3,
            )
        inv_sqrt = np.zeros(n)
        inv_sqrt[~isolated] = 1.0 / np.sqrt(deg[~isolated])
        S = sp.diags(inv_sqrt)
        diag = np.where(isolated, 0.0, 1.0) + ridge
        R = sp.diags(diag) - S @ W @ S
    R = sp.csr_matrix(R)
    R.sum_duplicates()
    R.sort_indices()
    return R, deg


class LaplacianPower(LinearOperator):
    """Matrix-free ``Q = R^p`` for a sparse symmetric ``R`` (p sparse products per mat-vec).

    Attributes
    ----------
    base : scipy.sparse.csr_matrix
        ``R`` (``L + ridge I`` or ``L_norm + ridge I``).
    power : int
    kind : str
    ridge : float
    """

    def __init__(self, base, power, kind=None, ridge=0.0):
        self.base = base
        self.power = int(power)
        self.kind = kind
        self.ridge = ridge
        super().__init__(dtype=np.float64, shape=base.shape)

    def _matvec(self, x):
        y = np.asarray(x, dtype=np.float64)
        for _ in range(self.power):
            y = self.base @ y
        return y

    def _matmat(self, X):
        return self._matvec(X)

    def _adjoint(self):
        return self  # R is symmetric


def laplacian(W, kind="L", power=1, ridge=0.0, *, operator="auto", validate=True):
    """Graph Laplacian regularizer ``Q = (L + ridge I)^power`` (or with ``L_norm``).

    Parameters
    ----------
    W : sparse matrix or array of shape (n, n)
        Symmetric nonnegative adjacency (validated; the diagonal is ignored).
    kind : {"L", "L_norm"}, default="L"
        ``L = D - W`` or ``L_norm = I - D^{-1/2} W D^{-1/2}``, ``D = diag(W 1)``.
    power : int, default=1
        Iterate ``p >= 1`` (Lever et al. 2012 use ``p > 1`` against degenerate harmonic
        solutions).
    ridge : float, default=0.0
        Shift ``>= 0`` added before the power: ``Q = (L + ridge I)^p``.
    operator : {"auto", "sparse", "linear_operator"}, default="auto"
        Representation of ``Q``: ``"sparse"`` forms the product explicitly (CSR);
        ``"linear_operator"`` returns a :class:`LaplacianPower`; ``"auto"`` is sparse for
        ``power <= 2`` and a :class:`LaplacianPower` for ``power >= 3`` (``nnz(L^p)`` grows
        like ``n k^p``).
    validate : bool, default=True
        Check ``W`` (:func:`fastgssl.graphs.check_adjacency`: square, symmetric, finite,
        nonnegative; the diagonal dropped). ``False`` skips the checks (two sparse
        transposes at 10^5 points) for a ``W`` that already passed them: a CSR matrix with
        sorted indices and no stored diagonal, as fastgssl's graph builders return.

    Returns
    -------
    Q : scipy.sparse.csr_matrix or LaplacianPower
        Symmetric positive semi-definite (definite when ``ridge > 0``).

    Warns
    -----
    UserWarning
        For ``kind="L_norm"`` when ``W`` has isolated vertices (their count is given); their
        rows and columns of ``L_norm`` are 0, like those of ``L``.

    Notes
    -----
    ``L`` has rows summing to 0 and null space spanned by the indicator vectors of the
    connected components; ``L_norm`` has spectrum in ``[0, 2]`` and null space spanned by
    ``D^{1/2} 1_c`` per component (``e_i`` for an isolated vertex).  See
    :func:`laplacian_null_space`.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.regularizers import laplacian
    >>> W = np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]], dtype=float)
    >>> laplacian(W).toarray()
    array([[ 1., -1.,  0.],
           [-1.,  3., -2.],
           [ 0., -2.,  2.]])
    """
    power, ridge = _check_kind_power_ridge(kind, power, ridge)
    if not isinstance(operator, str) or operator not in ("auto", "sparse", "linear_operator"):
        raise ValueError(
            f"operator must be 'auto', 'sparse' or 'linear_operator', got {operator!r}."
        )
    W = check_adjacency(W, "W") if validate else sp.csr_matrix(W, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported just below
        R, _ = _base_laplacian(W, kind, ridge)
    if not np.isfinite(R.data).all():
        raise ValueError(
            "the degrees of W (row sums of its weights) overflow float64; rescale W (for "
            "example W / W.max()): a Laplacian is unchanged up to that factor."
        )
    if operator == "linear_operator" or (operator == "auto" and power > MAX_EXPLICIT_POWER):
        return LaplacianPower(R, power, kind=kind, ridge=ridge)
    Q = R
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported just below
        for _ in range(power - 1):
            Q = Q @ R
    Q = sp.csr_matrix(Q)
    Q.sort_indices()
    if not np.isfinite(Q.data).all():
        raise ValueError(
            f"(L + ridge I)^{power} overflows float64 for this W; rescale W (for example "
            f"W / W.max()) or use a lower power."
        )
    return Q


def laplacian_null_space(W, kind="L"):
    """Orthonormal basis of the null space of ``L`` or ``L_norm`` (one vector per component).

    Returns
    -------
    N : ndarray of shape (n, n_components)
        Column c is ``1_c / sqrt(|c|)`` (``kind="L"``) or ``D^{1/2} 1_c / ||.||``
        (``kind="L_norm"``; ``e_i`` for an isolated vertex).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}.")
    W = check_adjacency(W, "W")
    n_comp, labels = connected_components(W)
    if kind == "L":
        weights = np.ones(W.shape[0])
    else:
        deg = np.asarray(W.sum(axis=1)).ravel()
        weights = np.where(deg > 0, np.sqrt(deg), 1.0)
    return component_basis(labels, n_comp, weights)


def component_basis(labels, n_comp, weights):
    """Orthonormal columns ``weights * 1_c / ||weights * 1_c||`` (dense n x n_comp)."""
    n = labels.shape[0]
    N = np.zeros((n, n_comp))
    N[np.arange(n), labels] = weights
    N /= np.linalg.norm(N, axis=0)
    return N


class _Regularizer:
    kind = "L"

    def __init__(self, power=1, ridge=0.0):
        self.power = power
        self.ridge = ridge

    def __call__(self, W):
        return laplacian(W, kind=self.kind, power=self.power, ridge=self.ridge)

    def get_params(self):
        return {"power": self.power, "ridge": self.ridge}

    def __repr__(self):
        return f"{type(self).__name__}(power={self.power!r}, ridge={self.ridge!r})"


class LaplacianRegularizer(_Regularizer):
    """Registry factory ``"L"``: ``reg(W)`` is ``laplacian(W, "L", power, ridge)``.

    Examples
    --------
    >>> from fastgssl import registry
    >>> reg = registry.get("fastgssl.regularizers", "L", power=2)
    >>> reg.kind, reg.power, reg.ridge
    ('L', 2, 0.0)
    """

    kind = "L"


class NormalizedLaplacianRegularizer(_Regularizer):
    """Registry factory ``"L_norm"``: ``reg(W)`` is ``laplacian(W, "L_norm", power, ridge)``."""

    kind = "L_norm"


def degree_centered(U, comp, d):
    """``U`` with every column shifted so that its degree-weighted mean is zero on each
    connected component (the normalization d^T u = 0 of Poisson learning, Calder et al.
    2020, and of the pseudo-inverse of the random-walk Laplacian).

    Parameters
    ----------
    U : ndarray of shape (n, k)
    comp : ndarray of int of shape (n,)
        Component label of every vertex (:func:`connected_components`).
    d : ndarray of shape (n,)
        Degrees.

    Returns
    -------
    ndarray of shape (n, k)
    """
    n_comp = int(comp.max()) + 1
    vol = np.bincount(comp, weights=d, minlength=n_comp)
    mass = np.zeros((n_comp, U.shape[1]))
    np.add.at(mass, comp, d[:, None] * U)
    shift = mass / np.where(vol > 0, vol, 1.0)[:, None]
    return U - shift[comp]
