"""Exact k-nearest-neighbour search: a BLAS filter with a certified exact refinement.

Algorithm (one concept: exact Euclidean kNN; no paper, standard numerical linear algebra)
------------------------------------------------------------------------------------------
1. *Filter.* Squared distances of a block of queries to a block of reference points are
   formed as ``||x||^2 + ||y||^2 - 2 x.y`` with one matrix product.  Dense data: one
   single-threaded BLAS ``sgemm`` of augmented float32 operands ``[x', 1]`` and
   ``[-2 y', ||y'||^2]`` (``x'``, ``y'`` centred and scaled by a power of two, built in row
   chunks, so float64 input never gets a centred float64 copy and float32 input stays
   float32), whose output block is at once scanned by a fused top-``k_c`` selection
   (a vectorized count of entries below each row's current ``k_c``-th candidate decides
   which chunks are walked); each of the ``n_jobs`` worker threads owns whole query
   blocks, so BLAS and the selection never run more threads than ``n_jobs`` together.
   Sparse data: a float64 sparse product of the centred CSR data (see
   :mod:`fastgssl._geometry`) and the same kind of heaps.  Data whose squared
   distances overflow or underflow float64 are refused first (``ValueError``: rescale).
2. *Refine.* The exact squared distances of the ``k_c`` candidates are recomputed from the
   original data (float32 entries widened; sequential float64 sum of ``(x_l - y_l)^2``)
   and sorted by ``(distance, index)``: ties are broken by the smaller index.
3. *Certify.* With ``u`` the unit round-off of the filter, every approximate distance is
   within ``delta_i = 8 (d + 8) u (||x_i||^2 + max_j ||y_j||^2)`` of the exact one
   (Higham's bound for dot products, plus the rounding of the inputs).  A reference point
   outside the candidate set has approximate distance at least the largest kept one,
   ``a_i``, hence exact distance ``>= a_i - delta_i``.  If ``a_i - delta_i`` is strictly
   larger than the exact ``k``-th candidate distance, the result is provably the exact
   lexicographic ``k`` nearest neighbours.  Rows that fail the test (heavy ties, e.g.
   many duplicated points or binary features) are recomputed exactly: a second float32
   product of those rows with every reference point keeps each reference within
   ``delta_i`` of the row's provisional (exact) ``k``-th distance, a superset of the answer,
   whose exact distances are sorted as before (small problems: an exact scan in float64).

The result is therefore exact (recall 1.0) with ties broken by index, while almost all the
work is a float32 matrix product.  For low-dimensional dense data a kd-tree
(:class:`scipy.spatial.cKDTree`, compiled, parallel over queries) produces the candidate
lists instead, and the same refinement and certificate apply, so ``10^6`` points in 2-D cost
``O(n log n)`` rather than ``O(n^2)``.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import scipy.sparse as sp

from fastgssl._geometry import centred_pair, check_distance_scale, squared_spread
from fastgssl._threads import numba_threads, run_tasks, small_blas
from fastgssl._validation import check_n_neighbors, check_X
from fastgssl.graphs._knn_kernels import (
    _bounded_block,
    _heap_update_block,
    _refine_dense,
    _refine_dense_numpy,
    _refine_sparse,
    _select_block,
    _select_block_sym,
)
from fastgssl.graphs._knn_tree import _candidates_kdtree, _tree_retry
from fastgssl.graphs._operands import (
    _U32,
    _gemm_operands,
    filter_bound,
    power_of_two_unit,
)

__all__ = ["knn_search", "reuse_neighbors", "shared_self_search"]

# Dense data with at most this many features uses the kd-tree candidate generator.
# Measured (n = 20,000, k = 10, shared 2-core machine): d = 3 tree 0.07 s / blocked 0.52 s,
# d = 5 0.15 / 0.42 s, d = 8 0.96 / 0.75 s.  The tree's advantage grows with n (n log n
# against n^2), so 5 is on the safe side of the crossing.
KDTREE_MAX_DIM = 5
_QUERY_BLOCK = 512
_REF_BLOCK = 2048  # measured: 512 x 2048 float32 blocks (4 MB) beat 512 x 8192
# Dense (GEMM) path: a query block x reference block of float32 partial distances, written
# by the GEMM and read at once by the selection while still in cache (4 MB: L2 + L3).
# CPU seconds on one thread, 20,000 x 50 / 8,000 x 784 float32: 128 x 2048 1.06 / 1.68,
# 256 x 1024 0.96 / 1.49, 256 x 2048 0.97 / 1.47, 512 x 2048 0.94 / 1.39, 256 x 4096
# 0.98 / 1.47.  Fewer query rows per block when there are too few blocks for the threads.
_GEMM_QUERY_BLOCK = 512
_GEMM_REF_BLOCK = 2048
# Square blocks of the symmetric self-search (one block feeds two sets of heaps).
_GEMM_SYM_BLOCK = 1024
_U64 = float(np.finfo(np.float64).eps) / 2


# ----------------------------------------------------------------------------------------
# Python drivers
# ----------------------------------------------------------------------------------------
# Below this many candidate coordinates (queries x candidates x features) the refinement is
# numpy's (:func:`_refine_dense_numpy`, the same numbers): milliseconds at this size, and a
# small job's first run does not compile the parallel kernel (about 2 s on the 2-core
# project machine).
_NUMPY_REFINE = 1 << 23


def _small_refine(Xq, cand_i):
    return Xq.shape[0] * cand_i.shape[1] * Xq.shape[1] <= _NUMPY_REFINE


def _refine_dense_auto(Xq, Xr, cand_i, *args):
    """:func:`_refine_dense_numpy` for small problems, else the parallel kernel."""
    small = _small_refine(Xq, cand_i)
    return (_refine_dense_numpy if small else _refine_dense)(Xq, Xr, cand_i, *args)


def _run_blocks(work, tasks, n_threads):
    """``work(task)`` for every task on ``n_threads`` worker threads (none for one), each
    BLAS call inside on one BLAS thread (the tasks run in parallel themselves; small_blas
    keeps one threadpoolctl controller: a new limit scans the loaded libraries, 6 ms)."""
    with small_blas(0.0):
        run_tasks(work, tasks, n_threads)


def _gemm_retry(X, R, failed, k, exclude_self, n_threads, sq_spread, out_i, out_d):
    """Exact lexicographic kNN of the rows the certificate failed (``failed``), whose
    ``out_i`` / ``out_d`` hold the ``k`` best candidates with exact distances.

    The true ``k``-th distance is at most the provisional one ``p_i``, so every answer lies
    within ``p_i`` and has an approximate distance at most ``p_i + delta_i`` (the filter's
    bound, module docstring): a second float32 product of the failed rows with all
    reference points keeps those references and :func:`_bounded_block` sorts their exact
    distances.  The result equals the exact scan's (the same float64 distances, the same
    order); for data with heavy ties (binary features: a1a.t had most rows uncertified)
    it costs a product instead of ``n`` float64 distances per row.
    """
    rows = np.flatnonzero(failed)
    Xf = X[rows]
    A, B, q_norms, r_norms, unit2 = _gemm_operands(Xf, R, sq_spread, threads=n_threads)
    nq, nr, d = rows.size, R.shape[0], R.shape[1]
    bound = out_d[rows, k - 1] / unit2 + filter_bound(d, q_norms, r_norms.max())
    bound *= 1.0 + 1e-12  # the rounding of this sum: keep a superset
    self_ids = rows if exclude_self else np.full(nq, -1, dtype=np.int64)
    best_d = np.full((nq, k), np.inf)
    best_i = np.full((nq, k), -1, dtype=np.int64)
    counts = np.zeros(nq, dtype=np.int64)
    qb = int(min(_GEMM_QUERY_BLOCK, max(64, -(-nq // (4 * max(1, n_threads))))))

    def work(q0):
        q1 = min(nq, q0 + qb)
        for r0 in range(0, nr, _GEMM_REF_BLOCK):
            part = A[q0:q1] @ B[r0:r0 + _GEMM_REF_BLOCK].T
            _bounded_block(part, r0, bound[q0:q1], Xf[q0:q1], R, self_ids[q0:q1],
                           best_d[q0:q1], best_i[q0:q1], counts[q0:q1])

    _run_blocks(work, range(0, nq, qb), n_threads)
    out_i[rows] = best_i
    out_d[rows] = best_d


def _candidates_blocked(Xq, Xr, kc, exclude_self, n_threads, sq_spread=None):
    """Candidate heaps from blocked products. Returns (cand_i, cand_worst, delta).

    ``n_threads`` Python worker threads each own whole query blocks: a worker computes the
    product of its block with a block of reference points (single-threaded BLAS, the GIL
    released) and merges it into its own heaps with a GIL-free Numba kernel.  Owning
    blocks needs no locks, and keeping BLAS single-threaded avoids its spinning threads
    competing with the selection kernel (measured: 2-thread BLAS + 2-thread Numba phases
    were 2x slower than this on a loaded 2-core machine).

    Both operands are centred on the reference mean first (:mod:`fastgssl._geometry`): the
    product's cancellation error scales with the squared norms, which centring makes as
    small as the data's spread allows, whatever its offset.  Dense data are also scaled by
    a power of two (exact) so that the float32 copies neither overflow nor underflow;
    ``sq_spread`` (the bound of :func:`fastgssl._geometry.squared_spread`) sets that scale, and the
    returned ``cand_worst`` / ``delta`` are in the original units.
    """
    nq = Xq.shape[0]
    nr = Xr.shape[0]
    d = Xq.shape[1]
    cand_i = np.full((nq, kc), -1, dtype=np.int64)
    cand_d = np.full((nq, kc), np.inf)
    same = Xq is Xr
    Cq, Cr = centred_pair(Xq, None if same else Xr)
    if sp.issparse(Xq):
        Fq = Cq
        q_norms = np.asarray(Cq.multiply(Cq).sum(axis=1)).ravel()
        r_norms = q_norms if same else np.asarray(Cr.multiply(Cr).sum(axis=1)).ravel()
        u = _U64
        FrT = Cr.T.tocsc()
        unit2 = 1.0
    else:
        if sq_spread is None:
            sq_spread = squared_spread(Xq, None if same else Xr)
        # centred norms are at most sqrt(sq_spread): scale them to <= 1 by a power of two
        unit = power_of_two_unit(sq_spread)
        unit2 = unit * unit
        Fq = (Cq * (1.0 / unit)).astype(np.float32)
        Fr = Fq if same else (Cr * (1.0 / unit)).astype(np.float32)
        q_norms = np.einsum("ij,ij->i", Fq, Fq, dtype=np.float64)
        r_norms = q_norms if Fr is Fq else np.einsum("ij,ij->i", Fr, Fr, dtype=np.float64)
        u = _U32
        FrT = np.ascontiguousarray(Fr.T)

    def work(q0):
        q1 = min(nq, q0 + _QUERY_BLOCK)
        Bq = Fq[q0:q1]
        hd = cand_d[q0:q1]
        hi = cand_i[q0:q1]
        for r0 in range(0, nr, _REF_BLOCK):
            r1 = min(nr, r0 + _REF_BLOCK)
            gram = Bq @ FrT[:, r0:r1]
            if sp.issparse(gram):
                gram = gram.toarray()
            _heap_update_block(gram, q_norms[q0:q1], r_norms[r0:r1], q0, r0,
                               exclude_self, hd, hi)

    _run_blocks(work, range(0, nq, _QUERY_BLOCK), n_threads)
    cand_worst = cand_d[:, 0] * unit2
    delta = 8.0 * (d + 8) * u * (q_norms + r_norms.max()) * unit2
    return cand_i, cand_worst, delta


def _symmetric_tasks(n_blocks):
    """The block pairs ``(I, J)``, ``I <= J``, of a symmetric product, in an order where
    consecutive tasks (run at the same time by different workers) rarely share a block:
    by offset ``J - I``, and within an offset by ``I`` in strides of 3."""
    tasks = []
    for off in range(n_blocks):
        for first in range(3):
            tasks.extend((i, i + off) for i in range(first, n_blocks - off, 3))
    return tasks


def _candidates_gemm(Xq, Xr, kc, exclude_self, n_threads, sq_spread):
    """Dense candidate lists from float32 GEMM blocks and a fused top-``k_c`` selection.

    Returns ``(cand_i, cand_approx, unit2, cand_worst, delta)``: as
    :func:`_candidates_blocked`, plus the candidates' float32 squared distances of the
    scaled rows (times ``unit2 = s^2`` in the data's units) for the refinement's pruning.

    Every block product is one single-threaded ``sgemm`` of the operands of
    :func:`_gemm_operands` (approximate squared distances of a block of rows against a
    block of rows), merged at once, while in cache, into max-heaps of the ``k_c`` smallest
    entries per query by the GIL-free kernels :func:`_select_block` (along rows) and
    :func:`_select_block_sym` (along rows and columns).  ``n_threads`` Python worker
    threads run the blocks; BLAS is held at one thread (threadpoolctl) and the selection is
    serial per block, so no more than ``n_threads`` threads ever run and neither spins
    against the other.

    Self-search (``exclude_self``, ``Xq is Xr``): the distance matrix is symmetric, so only
    the blocks ``(I, J)`` with ``I <= J`` are formed (half the flops) and an off-diagonal
    block feeds the heaps of its rows *and* of its columns.  A task locks its two blocks'
    heaps (in index order: no deadlock); :func:`_symmetric_tasks` orders the tasks so
    that concurrent ones rarely wait.  Other searches: each worker owns whole query blocks.

    Certificate bound.  With ``u = 2^-24`` and the centred, scaled rows of norm at most 1,
    the computed distance differs from the exact one of the original rows by at most
    ``(d + 2) u (||x'||^2 + ||y'||^2 + 2 ||x'|| ||y'||)`` (a dot product of length
    ``d + 2``, Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq. 3.5)
    plus ``4 u (||x'||^2 + ||y'||^2)`` (the rounding of ``x'`` and ``y'`` to float32) plus
    ``u (||x'||^2 + ||y'||^2)`` (the rounding of the norm columns), all below
    ``delta = 8 (d + 9) u (||x'||^2 + max ||y'||^2)``, which is returned in the original
    units (times ``s^2``).
    """
    nq = Xq.shape[0]
    nr, d = Xr.shape
    A, B, q_norms, r_norms, unit2 = _gemm_operands(Xq, Xr, sq_spread, threads=n_threads)
    cand_i = np.full((nq, kc), -1, dtype=np.int64)
    cand_d = np.full((nq, kc), np.inf, dtype=np.float32)
    threads = max(1, n_threads)
    symmetric = exclude_self and Xq is Xr

    if symmetric:
        # square blocks, at least ~4 tasks per thread
        bs = int(min(_GEMM_SYM_BLOCK, max(64, -(-nq // (3 * threads)))))
        starts = list(range(0, nq, bs))
        locks = [threading.RLock() for _ in starts]  # a diagonal task takes one twice

        def work(task):
            bi, bj = task
            q0, r0 = starts[bi], starts[bj]
            q1, r1 = min(nq, q0 + bs), min(nr, r0 + bs)
            part = np.matmul(A[q0:q1], B[r0:r1].T)
            with locks[bi], locks[bj]:  # bi <= bj; the same lock twice on the diagonal
                if bi == bj:
                    _select_block(part, q0, r0, True, cand_d[q0:q1], cand_i[q0:q1])
                else:
                    _select_block_sym(part, q0, r0, cand_d[q0:q1], cand_i[q0:q1],
                                      cand_d[r0:r1], cand_i[r0:r1])

        tasks = _symmetric_tasks(len(starts))
    else:
        rb = _GEMM_REF_BLOCK
        # at least 4 blocks per thread (load balance), at least 64 rows per GEMM
        qb = int(min(_GEMM_QUERY_BLOCK, max(64, -(-nq // (4 * threads)))))

        def work(q0):
            q1 = min(nq, q0 + qb)
            flat = np.empty(qb * rb, dtype=np.float32)
            hd = cand_d[q0:q1]
            hi = cand_i[q0:q1]
            Aq = A[q0:q1]
            for r0 in range(0, nr, rb):
                r1 = min(nr, r0 + rb)
                part = flat[:(q1 - q0) * (r1 - r0)].reshape(q1 - q0, r1 - r0)
                np.matmul(Aq, B[r0:r1].T, out=part)
                _select_block(part, q0, r0, exclude_self, hd, hi)

        tasks = range(0, nq, qb)

    _run_blocks(work, tasks, threads)
    cand_worst = cand_d[:, 0].astype(np.float64) * unit2
    delta = filter_bound(d, q_norms, r_norms.max(), unit2)
    return cand_i, cand_d, unit2, cand_worst, delta


def _search_dtype(X):
    """float32 for a dense float32 array (kept as is: the filter is float32 anyway and the
    exact refinement widens each entry), float64 for everything else."""
    if not sp.issparse(X) and getattr(X, "dtype", None) == np.float32:
        return np.float32
    return np.float64


# the search of reuse_neighbors(): {"X": array, "k": int, "result": (indices, distances)}
_REUSE = None


@contextlib.contextmanager
def reuse_neighbors(X, n_neighbors):
    """Serve every self-search of ``X`` with ``k <= n_neighbors`` from one search.

    Inside the block, ``knn_search(X, k)`` (``X`` the same object, no ``X_ref``,
    ``algorithm="auto"``) runs one search with ``n_neighbors`` on first use and returns its
    first ``k`` columns; so does :class:`fastgssl.graphs.IVFGraph`, once per configuration
    (:func:`shared_self_search`). The lists are sorted by ``(squared distance, index)``, so
    these are exactly the ``k``-nearest lists of a direct search: kNN graphs of one data set that
    differ only in ``k`` (a grid over ``n_neighbors``) share one ``O(n^2 d)`` search.
    Not thread-safe: for one process evaluating a grid (what
    :class:`fastgssl.cv.GridSearchCV` does around its in-process evaluation).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    n_neighbors : int
        The largest ``k`` served (capped at ``n_samples - 1``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.graphs import knn_search, reuse_neighbors
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> with reuse_neighbors(X, 10):
    ...     idx5, _ = knn_search(X, 5)
    >>> bool((idx5 == knn_search(X, 5)[0]).all())
    True
    """
    global _REUSE
    previous = _REUSE
    k_max = min(int(n_neighbors), X.shape[0] - 1)
    _REUSE = {"X": X, "k": k_max} if k_max >= 1 else None
    try:
        yield
    finally:
        _REUSE = previous


def shared_self_search(X, n_neighbors, key, search):
    """The first ``n_neighbors`` columns of ``search(K)``, run once per ``key`` inside
    :func:`reuse_neighbors` (``X`` the same object, ``n_neighbors <= K``); None outside.

    For builders other than the exact search (the inverted file) whose neighbour lists are
    sorted by ``(distance, index)`` within their candidate sets: graphs of one data set and
    one builder configuration that differ only in ``k`` share one search at the largest
    ``k``.  ``search(K)`` returns ``(indices, sq_distances, extra)``; the slices and
    ``extra`` are returned.
    """
    shared = _REUSE
    if shared is None or X is not shared["X"] or not 1 <= n_neighbors <= shared["k"]:
        return None
    cache = shared.setdefault("builders", {})
    if key not in cache:
        cache[key] = search(shared["k"])
    idx, sq, extra = cache[key]
    return idx[:, :n_neighbors].copy(), sq[:, :n_neighbors].copy(), extra


def knn_search(X, n_neighbors, X_ref=None, *, algorithm="auto", n_jobs=None,
               return_stats=False):
    """Exact k nearest neighbours (Euclidean) with ties broken by the smaller index.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_queries, n_features)
        Query points.  A dense ``float32`` array is searched as it is (no float64 copy);
        everything else as float64.
    n_neighbors : int
        Number of neighbours ``k`` per query.
    X_ref : array-like or sparse matrix of shape (n_ref, n_features), default=None
        Reference points.  ``None`` searches ``X`` against itself and excludes each point
        from its own list (its exact duplicates, if any, are ordinary neighbours).
    algorithm : {"auto", "brute", "kd_tree"}, default="auto"
        ``"brute"``: blocked products with a certified refinement; ``"kd_tree"``: candidate
        lists from :class:`scipy.spatial.cKDTree` (dense data only); ``"auto"``: the tree
        for dense data with at most ``KDTREE_MAX_DIM`` = 5 features, brute otherwise.
    n_jobs : int or None, default=None
        Threads: the worker threads of the GEMM blocks (each with one BLAS thread), the
        Numba kernels and the kd-tree queries; ``None``: the cores other jobs leave free
        (:func:`fastgssl._threads.default_numba_threads`), ``-1``: all.
    return_stats : bool, default=False
        Also return a dict with the algorithm used and the number of rows that needed the
        exact fallback scan.

    Returns
    -------
    indices : ndarray of shape (n_queries, n_neighbors), int64
        Neighbour indices (rows of ``X_ref``, or of ``X`` when ``X_ref`` is None), sorted by
        ``(squared distance, index)``.
    sq_distances : ndarray of shape (n_queries, n_neighbors), float64
        Exact squared Euclidean distances, computed in float64 as
        ``sum_l (x_l - y_l)^2``.

    Notes
    -----
    See the module docstring of :mod:`fastgssl.graphs._knn` for the filter / refine /
    certify algorithm.  Memory is ``O(n_queries k + block)``; no ``n x n`` matrix is formed.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.graphs import knn_search
    >>> X = np.array([[0.0], [1.0], [3.0], [1.0]])
    >>> idx, d2 = knn_search(X, 2)
    >>> idx.tolist()
    [[1, 3], [3, 0], [1, 3], [1, 0]]
    >>> d2[0].tolist()
    [1.0, 1.0]
    """
    global _REUSE
    shared = _REUSE
    if (shared is not None and X_ref is None and X is shared["X"] and algorithm == "auto"
            and not return_stats and isinstance(n_neighbors, (int, np.integer))
            and not isinstance(n_neighbors, bool) and 1 <= n_neighbors <= shared["k"]):
        if "result" not in shared:
            _REUSE = None  # the one search itself
            try:
                shared["result"] = knn_search(X, shared["k"], n_jobs=n_jobs)
            finally:
                _REUSE = shared
        idx, sq = shared["result"]
        return idx[:, :n_neighbors].copy(), sq[:, :n_neighbors].copy()
    X = check_X(X, "X", dtype=_search_dtype(X))
    exclude_self = X_ref is None
    if exclude_self:
        R = X
    else:
        R = check_X(X_ref, "X_ref", dtype=_search_dtype(X_ref))
        if not sp.issparse(X) and not sp.issparse(R) and X.dtype != R.dtype:
            X, R = X.astype(np.float64), R.astype(np.float64)
        if R.shape[1] != X.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but X_ref has {R.shape[1]}; they must match."
            )
        if sp.issparse(X) != sp.issparse(R):
            # mixed dense / sparse input: search in the sparse representation
            X, R = sp.csr_matrix(X), sp.csr_matrix(R)
    n_avail = R.shape[0] - (1 if exclude_self else 0)
    k = check_n_neighbors(n_neighbors, n_avail + 1, name="n_neighbors")
    if not isinstance(algorithm, str) or algorithm not in ("auto", "brute", "kd_tree"):
        raise ValueError(
            f"algorithm must be 'auto', 'brute' or 'kd_tree', got {algorithm!r}."
        )
    sparse = sp.issparse(X)
    if algorithm == "kd_tree" and sparse:
        raise ValueError("algorithm='kd_tree' needs dense X; use algorithm='brute' for sparse.")
    if algorithm == "auto":
        algorithm = "kd_tree" if (not sparse and X.shape[1] <= KDTREE_MAX_DIM) else "brute"
    # candidates beyond k: the float32 filter needs a margin; kd-tree distances are
    # float64-accurate, so a small margin suffices there (each extra one costs tree work)
    extra = 3 if algorithm == "kd_tree" else max(8, k)
    kc = min(n_avail, k + extra)
    complete = kc == n_avail
    # refuse data whose squared distances overflow (or underflow) float64: the exact
    # refinement would compare inf with inf and the filter would keep no candidate
    sq_spread = check_distance_scale(X, None if exclude_self else R, name="X",
                                     y_name="X_ref")
    if sparse:
        X.sort_indices()
        R.sort_indices()
    elif algorithm == "kd_tree" and X.dtype != np.float64:
        # at most KDTREE_MAX_DIM features (or an explicit request): the float64 copy the
        # tree makes anyway
        X = X.astype(np.float64)
        R = X if exclude_self else R.astype(np.float64)
    out_i = np.full((X.shape[0], k), -1, dtype=np.int64)
    out_d = np.full((X.shape[0], k), np.inf)
    with numba_threads(n_jobs) as threads:
        if algorithm == "kd_tree":
            cand_i, approx, worst, delta, tree = _candidates_kdtree(X, R, kc, exclude_self,
                                                                    threads)
            unit2 = 1.0
        elif sparse:
            cand_i, worst, delta = _candidates_blocked(X, R, kc, exclude_self, threads,
                                                       sq_spread)
        else:
            cand_i, approx, unit2, worst, delta = _candidates_gemm(X, R, kc, exclude_self,
                                                                   threads, sq_spread)
        if sparse:
            n_fb = _refine_sparse(X.indptr, X.indices, X.data, R.indptr, R.indices, R.data,
                                  cand_i, worst, delta, 0, exclude_self, complete, k,
                                  out_i, out_d)
        else:
            failed = np.zeros(X.shape[0], dtype=np.bool_)
            # uncertified rows: scanned by numpy's refinement (small problems), else retried
            scan = algorithm != "kd_tree" and _small_refine(X, cand_i)
            n_fb = _refine_dense_auto(X, R, cand_i, approx, unit2, worst, delta, 0,
                                      exclude_self, complete, k, scan, out_i, out_d, failed)
            if not scan and n_fb and algorithm == "kd_tree":
                _tree_retry(tree, X, R, failed, kc, k, exclude_self, complete, threads,
                            out_i, out_d)
            elif not scan and n_fb:
                _gemm_retry(X, R, failed, k, exclude_self, threads, sq_spread, out_i, out_d)
    nr = R.shape[0]
    if out_i.size and (out_i.min() < 0 or out_i.max() >= nr or not np.isfinite(out_d).all()):
        # cannot happen for checked input; never hand out indices nobody has checked
        raise RuntimeError(
            "knn_search produced an invalid neighbour list (index outside [0, "
            f"{nr}) or a non-finite distance); please report this with the data's shape "
            "and scale."
        )
    if return_stats:
        return out_i, out_d, {"algorithm": algorithm, "n_fallback_rows": int(n_fb),
                              "n_candidates": kc, "n_threads": threads}
    return out_i, out_d
