"""Function induction and subset approximations for graph label propagation.

Implements sections 3 and 5 of Bengio, Delalleau & Le Roux (2004), *Efficient non-parametric
function induction in semi-supervised learning* (Bengio et al. (2005); Bengio et al. 2005):

- :func:`kernel_weights` evaluates the graph's kernel on squared distances, so that a new point
  is weighed against its training neighbours exactly as the graph weighs training pairs (the
  self-tuned kernels with the new point's own d_k, from its k nearest training neighbours);
- :func:`induction_operator` turns ``k`` neighbour indices and kernel weights into the sparse
  operator of the induction formula, either the Parzen-window form of the criterion SS(lambda, K)

      f(x) = sum_j K(x, x_j) f_j / sum_j K(x, x_j)

  or the normalized form of local and global consistency (Zhou et al. 2004)

      F(x) = alpha sum_j K(x, x_j) F_j / sqrt(a(x) d_j),   a(x) = sum_j K(x, x_j),

  (both obtained by minimising the training criterion over the new value only, training values
  fixed; on an unlabeled training point with its graph row they reproduce the transductive
  value exactly);
- :func:`subset_smoothness` forms the m x m matrix Pi^T Q Pi of the subset approximation, where
  Pi = [I; P_RS] expresses the values on R = U \\ S by the induction formula from the values on
  S (S contains the labeled points).

The subset cost is the training criterion evaluated at f = Pi f_S,

    C(f_S) = (f - y)^T Lambda (f - y) + f^T Q f,   Q = L = D - W  (SS)  or  D^-1/2 L D^-1/2 (LGC),

so the normal equations are (Pi^T Q Pi + Pi^T Lambda Pi) f_S = Pi^T Lambda y. With
P_RS = W_RS row-normalized (Bengio et al. 2005) Pi^T L Pi expands into exactly the four blocks of
Bengio et al. 2005 (C_SS, C_RS and C_RR); ``drop_rr`` removes the edges with both ends in R from Q,
which is the cheaper variant without the C_RR term. All products are sparse: with a k-sparse
P_RS the cost is O(nnz(W) k) (with C_RR: O(nnz(W) k^2)), within the O(m^2 (n - m)) bound of
Bengio et al. (2005), and no n x n dense matrix is ever formed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fastgssl.graphs.internal import (
    DEFAULT_SELF_TUNED_CONSTANT,
    SELF_TUNED,
    WEIGHTS,
    default_symmetrize,
    self_tuned_scale,
    self_tuned_weights,
)

__all__ = [
    "WEIGHTS",
    "induction_operator",
    "kernel_weights",
    "needs_scale",
    "subset_smoothness",
]

def needs_scale(weight, symmetrize=None):
    """Whether :func:`kernel_weights` needs the scales ``d_k^2`` of the query and reference
    points: for the self-tuned weights, and for every symmetrization but ``"max"``
    (``symmetrize`` None: the weight's own, as in :func:`kernel_weights`)."""
    how = default_symmetrize(weight) if symmetrize is None else symmetrize
    return weight in SELF_TUNED or how != "max"


def kernel_weights(sq_distances, weight, sigma_w=None, *, shift=False, query_scale=None,
                   ref_scale=None, symmetrize=None, constant=DEFAULT_SELF_TUNED_CONSTANT):
    """Kernel values K(x, x_j) of the graph from squared distances.

    Parameters
    ----------
    sq_distances : ndarray of shape (n_query, k)
        Squared Euclidean distances of each query to its ``k`` nearest reference points.
    weight : {"binary", "gaussian", "distance", "self_tuned", "self_tuned_sym"}
        The graph's edge weight: 1, exp(-d^2 / (2 sigma_w)) (sigma_w is a squared distance, the
        papers' convention), the distance d itself (the convention of
        :func:`fastgssl.graphs.knn_graph`), or a self-tuned weight (see Notes).
    sigma_w : float
        Gaussian bandwidth (required for ``"gaussian"``).
    shift : bool
        Subtract each row's smallest exponent inside the exponential (Gaussian and
        ``"self_tuned_sym"``). A Parzen ratio is invariant to this per-row factor, and it
        keeps far queries from underflowing to 0/0.
    query_scale : ndarray of shape (n_query,)
        ``d_k(x)^2`` of each query: its squared distance to its k-th nearest reference point
        (required for the self-tuned weights and for a symmetrization other than ``"max"``).
    ref_scale : ndarray of shape (n_query, k)
        ``d_k(x_j)^2`` of each listed reference point in the training graph (required as
        ``query_scale``).
    symmetrize : {"max", "mean", "mutual"} or None
        How the kNN graph joined its two directed weights (None: the weight's own,
        :func:`fastgssl.graphs.knn_graph`); the query is weighed the same way (Notes).
    constant : float
        c of the self-tuned weights (the graph's ``self_tuned_constant``).

    Returns
    -------
    weights : ndarray of shape (n_query, k)

    Notes
    -----
    A kNN graph weighs the pair (i, j) by joining the directed weights a_ij (present when
    x_j is among the k nearest neighbours of x_i) and a_ji: ``"max"`` max(a_ij, a_ji),
    ``"mean"`` (a_ij + a_ji) / 2, ``"mutual"`` min(a_ij, a_ji), an absent direction counting
    0. A query x is weighed against a training point x_j in the same way: its outward weight
    a(x, x_j) is always present (x_j is among the k nearest training points of x), the
    inward weight a(x_j, x) when x would be among the k nearest neighbours of x_j,
    d <= d_k(x_j). The directed weights are exp(-c d^2 / d_k(x)^2) outward and
    exp(-c d^2 / d_k(x_j)^2) inward for ``"self_tuned"``, exp(-c d^2 / (d_k(x) d_k(x_j)))
    both ways for ``"self_tuned_sym"`` (c = ``constant``), and the symmetric weight itself
    for the others (so that ``"max"`` needs no scale for them). On a training point queried against
    the others (itself left out) this reproduces its row of W over its k nearest neighbours
    (away from ties).
    """
    d2 = np.maximum(np.asarray(sq_distances, dtype=np.float64), 0.0)
    how = default_symmetrize(weight) if symmetrize is None else symmetrize
    if weight not in WEIGHTS:
        raise ValueError(f"graph_weight must be one of {list(WEIGHTS)}, got {weight!r}.")
    if needs_scale(weight, how):
        if query_scale is None or ref_scale is None:
            raise ValueError(
                f"graph_weight={weight!r} with symmetrize={how!r} needs the scales d_k of the "
                f"query and reference points (query_scale, ref_scale)."
            )
        qs = np.asarray(query_scale, dtype=np.float64)
        rs = np.asarray(ref_scale, dtype=np.float64)
    if weight == "self_tuned":
        out = self_tuned_weights(d2, self_tuned_scale(qs), constant=constant)
        inward = self_tuned_weights(d2, rs, constant=constant)
    elif weight == "self_tuned_sym":
        out = self_tuned_weights(d2, self_tuned_scale(qs, rs), shift=shift, constant=constant)
        inward = out
    else:
        out = inward = _symmetric_weights(d2, weight, sigma_w, shift)
    if how == "max" and inward is out:
        return out
    inward = np.where(d2 <= rs, inward, 0.0)
    if how == "max":
        return np.maximum(out, inward)
    if how == "mean":
        return 0.5 * (out + inward)
    return np.minimum(out, inward)


def _symmetric_weights(d2, weight, sigma_w, shift):
    """Binary, Gaussian or distance weights of squared distances ``d2``."""
    if weight == "binary":
        return np.ones_like(d2)
    if weight == "gaussian":
        if sigma_w is None or not sigma_w > 0:
            raise ValueError(f"a Gaussian kernel needs sigma_w > 0, got {sigma_w!r}.")
        if shift and d2.size:
            d2 = d2 - d2.min(axis=1, keepdims=True)
        return np.exp(-d2 / (2.0 * sigma_w))
    return np.sqrt(d2)


def induction_operator(indices, weights, n_ref, *, ref_valid=None, form="parzen",
                       ref_degrees=None, alpha=None):
    """Sparse operator of the induction formula, shape (n_query, n_ref).

    Parameters
    ----------
    indices : ndarray of int, shape (n_query, k)
        Reference (training) neighbours of each query point.
    weights : ndarray of shape (n_query, k)
        Kernel values K(x, x_j) (see :func:`kernel_weights`).
    n_ref : int
        Number of reference points (columns).
    ref_valid : ndarray of bool, shape (n_ref,), optional
        References allowed to vote; the others get weight 0 and the Parzen weights are
        renormalized over the valid ones (points whose value is undefined, e.g. abstained).
    form : {"parzen", "lgc"}
        ``"parzen"``: rows K(x, x_j) / sum_j K(x, x_j), row-stochastic (criterion SS).
        ``"lgc"``: alpha K(x, x_j) / sqrt(a(x) d_j) with a(x) = sum_j K(x, x_j) over all
        neighbours (local and global consistency).
    ref_degrees : ndarray of shape (n_ref,)
        Graph degrees d_j of the references (``form="lgc"``).
    alpha : float
        LGC's alpha (``form="lgc"``).

    Returns
    -------
    P : scipy.sparse.csr_matrix of shape (n_query, n_ref)
    supported : ndarray of bool, shape (n_query,)
        Rows with a positive total weight on valid references; the other rows are zero.
    """
    indices = np.asarray(indices, dtype=np.int64)
    w = np.array(weights, dtype=np.float64, copy=True)
    n_query, k = indices.shape
    if ref_valid is not None:
        w *= np.asarray(ref_valid, dtype=bool)[indices]
    total = w.sum(axis=1)
    supported = total > 0
    safe_total = np.where(supported, total, 1.0)
    if form == "parzen":
        w /= safe_total[:, None]
    elif form == "lgc":
        a = np.asarray(weights, dtype=np.float64).sum(axis=1)
        deg = np.asarray(ref_degrees, dtype=np.float64)[indices]
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = alpha / np.sqrt(np.where(a > 0, a, 1.0)[:, None] * deg)
        w *= np.where(deg > 0, scale, 0.0)
        supported &= (w > 0).any(axis=1)
    else:
        raise ValueError(f"form must be 'parzen' or 'lgc', got {form!r}.")
    indptr = np.arange(0, n_query * k + 1, k, dtype=np.int64)
    P = sp.csr_matrix((w.ravel(), indices.ravel(), indptr), shape=(n_query, n_ref))
    P.sum_duplicates()
    P.eliminate_zeros()
    return P, supported


def _drop_block(W, in_block):
    """W without the entries whose row and column both lie in ``in_block``."""
    W = sp.csr_matrix(W)
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    keep = ~(in_block[rows] & in_block[W.indices])
    return sp.csr_matrix((W.data[keep], (rows[keep], W.indices[keep])), shape=W.shape)


def subset_smoothness(W, S, R, P, *, normalized=False, drop_rr=False):
    """The m x m smoothness matrix Pi^T Q Pi of the subset approximation (sparse).

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric nonnegative graph, empty diagonal.
    S : ndarray of int, shape (m,)
        The subset (contains the labeled points); column i of the result is point ``S[i]``.
    R : ndarray of int, shape (n - m,)
        The rest, in the row order of ``P``.
    P : sparse matrix of shape (n - m, m)
        Induction operator f_R = P f_S.
    normalized : bool
        ``False``: Q = L = D - W (criterion SS). ``True``: Q = D^-1/2 L D^-1/2 = I - D^-1/2 W
        D^-1/2 on non-isolated vertices (local and global consistency), D the full degrees.
    drop_rr : bool
        Leave out the edges with both ends in R (the C_RR term). The degrees in the
        normalization stay those of the full graph.

    Returns
    -------
    A0 : scipy.sparse.csr_matrix of shape (m, m)
        Symmetric positive semidefinite.

    Notes
    -----
    f^T Q f with f = Pi f_S equals C_SS + C_RS + C_RR of Bengio et al. (2005) section 5.1:
    1/2 sum_ij W_ij (f_i - f_j)^2 over the pairs kept (normalized: with f_i / sqrt(d_i)).
    """
    n = W.shape[0]
    S = np.asarray(S, dtype=np.int64)
    R = np.asarray(R, dtype=np.int64)
    m = S.size
    W = sp.csr_matrix(W)
    degrees = np.asarray(W.sum(axis=1)).ravel()
    if drop_rr:
        in_R = np.zeros(n, dtype=bool)
        in_R[R] = True
        W_kept = _drop_block(W, in_R)
    else:
        W_kept = W
    Q = sp.diags(np.asarray(W_kept.sum(axis=1)).ravel()) - W_kept
    if normalized:
        inv_sqrt = np.zeros(n)
        np.divide(1.0, np.sqrt(degrees), out=inv_sqrt, where=degrees > 0)
        Dm = sp.diags(inv_sqrt)
        Q = Dm @ Q @ Dm
    P = sp.csr_matrix(P)
    rows = np.concatenate([S, np.repeat(R, np.diff(P.indptr))])
    cols = np.concatenate([np.arange(m), P.indices])
    vals = np.concatenate([np.ones(m), P.data])
    Pi = sp.csr_matrix((vals, (rows, cols)), shape=(n, m))
    A0 = (Pi.T @ (sp.csr_matrix(Q) @ Pi)).tocsr()
    return ((A0 + A0.T) * 0.5).tocsr()
