"""A coarse space for the slow modes of near-separate clusters: two-level Jacobi-PCG.

On a kNN graph of data with c near-separate clusters, Jacobi-preconditioned CG spends most
of its iterations on about one tiny eigenvalue per cluster: the eigenvectors are nearly
constant on each cluster, and the residual falls off a cliff once they are resolved. A
coarse space of vectors constant on aggregates of the graph holds them. The aggregates come
from pyamg's standard aggregation (Vanek, Mandel & Brezina 1996) applied repeatedly to the
graph and its Galerkin coarsenings ``A_l = Z_l^T A_{l-1} Z_l`` (``Z_l`` the aggregate
indicator of pass l, ``A_0 = A``), until at most ``max_coarse`` aggregates remain. With
``P_l = Z_1 ... Z_l`` the indicator of the level-l aggregates on the graph and ``E = A_L``
(m x m; ``E^+`` its pseudo-inverse, applied through a factorization grounded at one vertex
per singular component, see :class:`_CoarseSolve`: a Laplacian's coarse operator is
singular per component),
the preconditioners are

``"two_level"``, the additive two-level one (Toselli & Widlund 2005, chapter 2)::

    M^-1 = D^-1 + P_L E^+ P_L^T,

``"multilevel"``, additive multilevel diagonal scaling (Zhang 1992; the BPX form of
Bramble, Pasciak & Xu 1990 on aggregates), which adds every intermediate level's diagonal::

    M^-1 = D^-1 + sum_{l=1}^{L-1} P_l D_l^+ P_l^T + P_L E^+ P_L^T,     D_l = diag(A_l),

(``D_l^+``: zero where an aggregate's diagonal vanishes to round-off, e.g. an aggregate
holding a whole component of a Laplacian). Both are symmetric positive definite (a positive
definite diagonal plus positive semi-definite terms), so valid CG preconditioners, and both
cost one pass over the residual block for ``P_1^T R`` and one for ``D^-1 R + P_1 C_1``; the
intermediate levels work on arrays of ``m_l`` rows (``m_1`` about n / 10).

``"multiplicative"`` is the symmetric two-level cycle: a damped Jacobi step
(``omega = 4 / (3 rho(D^-1 A))``), the coarse correction of its residual, a second Jacobi
step; symmetric positive definite for that omega, two more products with A per application.

Measured (``bench/bench_coarse_space.py``: Poisson learning's 10 right-hand sides on the
kNN graph of a 10-class Gaussian mixture in 50 dimensions, k = 10, rtol 1e-4; CPU seconds
at load 17-21 on two cores): at 10^5 points (exact graph) Jacobi alone 83 iterations
(2.7 s), two-level 28 (1.0 s), multilevel 30 (0.9 s), multiplicative 15 (1.3 s, setup
2.7 s for the spectral radius), pyamg-aggregation V-cycles (``method="amg"``) 13 (1.4 s,
setup 1.8 s); at 10^6 (inverted-file graph, 17.8 nonzeros per row) two-level 40 iterations
(solve 29 s, setup 11 s), multiplicative 21 (solve 57 s, setup 23 s).
Two passes of standard aggregation leave 10 aggregates at both sizes (the clusters); the
aggregation runs on the input order: aggregated in reverse Cuthill-McKee order the 10^6
graph needed 69 iterations.

References
----------
Nicolaides (1987). Deflation of conjugate gradients with applications to boundary value
problems. SIAM J. Numer. Anal. 24(2). Bramble, Pasciak & Xu (1990). Parallel multilevel
preconditioners. Math. Comp. 55. Zhang (1992). Multilevel Schwarz methods. Numer. Math. 63.
Toselli & Widlund (2005). Domain Decomposition Methods, chapter 2 (additive two-level
Schwarz).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from fastgssl import _sparse_blocks as K
from fastgssl._components import component_labels

__all__ = ["AggregationCoarseSpace", "KINDS"]

# aggregation passes continue while more aggregates remain (and more than sqrt(nnz(A)))
MAX_COARSE = 1000
# the coarse operator is factorized dense (Cholesky) up to this order when at least
# 1 / DENSE_FILL of its entries are nonzero, else sparse (see _CoarseSolve)
DENSE_MAX = 2000
DENSE_FILL = 16
KINDS = ("two_level", "multilevel", "multiplicative")
# a coarse diagonal entry below this fraction of its aggregate's summed fine diagonal is
# round-off of a vanishing row sum (an aggregate holding a whole component): not inverted
_NULL_DIAGONAL = 1e-10


def _aggregate(A):
    """Standard aggregation of A's graph: aggregate of every row (-1: none) and their count."""
    from pyamg.aggregation import standard_aggregation

    AggOp, _ = standard_aggregation(sp.csr_array(A))
    AggOp = sp.csr_matrix(AggOp)
    agg = np.full(A.shape[0], -1, dtype=np.int64)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(AggOp.indptr))
    agg[rows] = AggOp.indices
    return agg, AggOp.shape[1]


def _has_edges(A):
    """Whether A has a nonzero off-diagonal entry."""
    return A.count_nonzero() > np.count_nonzero(A.diagonal())


@njit(cache=True, parallel=True)
def _galerkin_rows(indptr, indices, data, agg, mptr, members, m):  # pragma: no cover
    """Rows of ``Z^T A Z``, each coarse row a in its own slot of a buffer bounded by the
    entries of its members: per member i (increasing), the sums of row i of A over the
    columns of each aggregate (in entry order), then those sums over the members; exact
    zeros dropped at both steps. This is scipy's ``Z.T @ (A @ Z)`` sum for sum (its two
    products drop exact zeros too), without the n x m intermediate. Columns sorted."""
    bound = np.zeros(m + 1, dtype=np.int64)
    for a in range(m):
        s = 0
        for t in range(mptr[a], mptr[a + 1]):
            i = members[t]
            s += indptr[i + 1] - indptr[i]
        bound[a + 1] = bound[a] + s
    cols = np.empty(bound[m], dtype=np.int32)
    vals = np.empty(bound[m], dtype=np.float64)
    counts = np.zeros(m, dtype=np.int64)
    n_chunks = 16  # (each chunk zeroes five arrays of m: few chunks)
    size = (m + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        acc = np.zeros(m)
        mark = np.zeros(m, dtype=np.int64)
        row_acc = np.zeros(m)
        row_mark = np.zeros(m, dtype=np.int64)
        row_list = np.empty(m, dtype=np.int64)
        for a in range(c * size, min(m, (c + 1) * size)):
            lo = bound[a]
            k = 0
            for t in range(mptr[a], mptr[a + 1]):
                i = members[t]
                r = 0
                for jj in range(indptr[i], indptr[i + 1]):
                    b = agg[indices[jj]]
                    if b < 0:
                        continue
                    if row_mark[b] != i + 1:
                        row_mark[b] = i + 1
                        row_acc[b] = 0.0
                        row_list[r] = b
                        r += 1
                    row_acc[b] += data[jj]
                for q in range(r):
                    b = row_list[q]
                    v = row_acc[b]
                    if v != 0.0:
                        if mark[b] != a + 1:
                            mark[b] = a + 1
                            acc[b] = 0.0
                            cols[lo + k] = b
                            k += 1
                        acc[b] += v
            kept = 0
            if k * 8 > m:  # a dense coarse row: a scan of the marks beats sorting k columns
                for b in range(m):
                    if mark[b] == a + 1 and acc[b] != 0.0:
                        cols[lo + kept] = b
                        vals[lo + kept] = acc[b]
                        kept += 1
            else:
                row = np.sort(cols[lo:lo + k])
                for q in range(k):
                    b = row[q]
                    if acc[b] != 0.0:
                        cols[lo + kept] = b
                        vals[lo + kept] = acc[b]
                        kept += 1
            counts[a] = kept
    out_ptr = np.zeros(m + 1, dtype=np.int64)
    for a in range(m):
        out_ptr[a + 1] = out_ptr[a] + counts[a]
    out_cols = np.empty(out_ptr[m], dtype=np.int32)
    out_vals = np.empty(out_ptr[m], dtype=np.float64)
    for a in prange(m):
        for q in range(counts[a]):
            out_cols[out_ptr[a] + q] = cols[bound[a] + q]
            out_vals[out_ptr[a] + q] = vals[bound[a] + q]
    return out_ptr, out_cols, out_vals


def _galerkin(A, agg, m):
    """``Z^T A Z`` (CSR, m x m, sorted indices) for the indicator Z of the aggregates
    ``agg`` (one compiled pass; the same sums as scipy's two sparse products)."""
    A = sp.csr_matrix(A)
    used = np.flatnonzero(agg >= 0)
    order = np.argsort(agg[used], kind="stable")
    members = used[order].astype(np.int64)
    mptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(agg[used], minlength=m), out=mptr[1:])
    # the aggregates read as int32 where they fit: their random reads stay in cache longer
    # (10^6 vertices, 14,795 aggregates: 0.97 against 1.27 s)
    agg_read = np.ascontiguousarray(agg, dtype=np.int32 if m < 2**31 else np.int64)
    indptr, indices, data = _galerkin_rows(A.indptr, A.indices, A.data, agg_read, mptr,
                                           members, m)
    E = sp.csr_matrix((data, indices, indptr), shape=(m, m))
    E.has_sorted_indices = True
    E.has_canonical_format = True
    return E


@njit(cache=True)
def _positive_coupling(indptr, indices, data):  # pragma: no cover - compiled
    """Whether some off-diagonal entry is positive (one streaming pass)."""
    for i in range(indptr.shape[0] - 1):
        for jj in range(indptr[i], indptr[i + 1]):
            if data[jj] > 0.0 and indices[jj] != i:
                return True
    return False


@njit(cache=True)
def _linked(indptr, indices, data, agg, i, a):  # pragma: no cover - compiled
    """Whether row i has a nonzero entry into an aggregate other than ``a``."""
    for jj in range(indptr[i], indptr[i + 1]):
        b = agg[indices[jj]]
        if b >= 0 and b != a and data[jj] != 0.0:
            return True
    return False


@njit(cache=True)
def _collapse_scan(indptr, indices, data, agg, m):  # pragma: no cover - compiled
    """True when standard aggregation of ``Z^T A Z`` would leave at most one aggregate
    (see :func:`_next_pass_collapses`; no positive off-diagonal entry in ``A``)."""
    n = agg.shape[0]
    linked = np.zeros(m, dtype=np.uint8)  # aggregates with a neighbour
    for i in range(n):
        a = agg[i]
        if a >= 0 and linked[a] == 0 and _linked(indptr, indices, data, agg, i, a):
            linked[a] = 1
    root = -1
    for a in range(m):  # the first aggregate with a neighbour
        if linked[a] == 1:
            root = a
            break
    if root < 0:
        return True  # no coarse edge: no aggregate at all
    near = np.zeros(m, dtype=np.uint8)  # the root and its neighbours
    near[root] = 1
    for i in range(n):
        if agg[i] == root:
            for jj in range(indptr[i], indptr[i + 1]):
                b = agg[indices[jj]]
                if b >= 0 and data[jj] != 0.0:
                    near[b] = 1
    # every other aggregate with a neighbour: within distance 2 of the root when an entry
    # of one of its rows reaches a neighbour of the root (the first found settles it),
    # else a root of pass 1 of its own
    reached = near.copy()
    for i in range(n):
        a = agg[i]
        if a < 0 or reached[a] == 1 or linked[a] == 0:
            continue
        for jj in range(indptr[i], indptr[i + 1]):
            b = agg[indices[jj]]
            if b >= 0 and b != a and data[jj] != 0.0 and near[b] == 1:
                reached[a] = 1
                break
    for a in range(m):
        if linked[a] == 1 and reached[a] == 0:
            return False
    return True


def _next_pass_collapses(A, agg, m, positive_coupling=None):
    """Whether standard aggregation of the Galerkin operator ``Z^T A Z`` would leave at
    most one aggregate, told from ``A`` without forming the product.

    pyamg's standard aggregation (pass 1) makes the first node with a neighbour a root and
    aggregates its neighbourhood; a later node becomes another root exactly when none of
    its neighbours is aggregated yet. So it leaves one aggregate exactly when every node
    with a neighbour lies within distance 2 of that first one; none when no node has one.
    The coarse graph's edges are read from ``A``'s entries between the aggregates' members:
    with no positive off-diagonal entry (a Laplacian, a ridged one, a Dirichlet block of
    one) the Galerkin sums cannot cancel, and an edge of ``Z^T A Z`` is exactly a nonzero
    entry of ``A`` between two aggregates. Otherwise None (form the product). After a
    streaming pass over the signs (``positive_coupling``: its answer, when the caller's
    pass over the rows gave it), the scan reads the rows of the root's members, then
    every row in stored order until one entry of its aggregate reaches a neighbour of the
    root (the rest of that aggregate's rows are skipped): on
    ``bench/bench_priced_setup.py``'s ridged 10-NN systems, one thread, 3.5 against 61
    ms for the product and the next pass at 10^5 points (1,566 aggregates), 6.8 ms
    against 164 ms at 2x10^5 (3,039).
    """
    A = sp.csr_matrix(A)
    if positive_coupling is None:
        positive_coupling = _positive_coupling(A.indptr, A.indices, A.data)
    if positive_coupling:
        return None
    return bool(_collapse_scan(A.indptr, A.indices, A.data,
                               np.ascontiguousarray(agg, np.int32 if m < 2**31 else np.int64),
                               m))


def _prolong(C, agg):
    """``Z C``: row i of the result is row ``agg[i]`` of C (0 where ``agg[i] < 0``)."""
    out = C[np.maximum(agg, 0)]
    out[agg < 0] = 0.0
    return out


@njit(cache=True)
def _minus_null_part(S, group, weight, s):  # pragma: no cover - compiled
    """``S - N (N^T S)`` for the m x s matrix N whose row k holds ``weight[k]`` in column
    ``group[k]`` (-1: an empty row), with scipy's sums for the CSR products
    ``N @ (N.T.tocsr() @ S)``: each entry of ``N^T S`` accumulated from 0 over its rows in
    increasing order, each entry of ``N (.)`` as 0 plus its one product. Bit for bit
    scipy's (tested), without two sparse products' per-call overhead."""
    m, r = S.shape
    T = np.zeros((s, r))
    for k in range(m):
        c = group[k]
        if c >= 0:
            for j in range(r):
                T[c, j] += weight[k] * S[k, j]
    out = np.empty((m, r))
    for k in range(m):
        c = group[k]
        for j in range(r):
            y = 0.0
            if c >= 0:
                y += weight[k] * T[c, j]
            out[k, j] = S[k, j] - y
    return out


class _CoarseSolve:
    """``E^+ S`` for a symmetric positive semi-definite coarse operator E (m x m), by a
    factorization of E grounded at one vertex per singular connected component.

    A component whose rows sum to zero (to round-off) is singular with the constants as its
    null vector (a Laplacian's Galerkin operator); removing one of its vertices (the ground)
    leaves a positive definite block. For S in the range, the grounded solution x solves
    ``E x = S``; the pseudo-inverse solution is x minus its mean on each singular component,
    and the range is reached by subtracting S's means there first: with N the normalized
    component constants, ``E^+ = (I - N N^T) G (I - N N^T)`` for the grounded inverse G.

    The factorization is Cholesky (LAPACK) of the dense grounded matrix when E is dense
    enough for it (``nnz(E) >= m^2 / DENSE_FILL`` and ``m <= DENSE_MAX``: a kNN graph's
    first Galerkin operator has about 100 nonzeros per row, and SuperLU's fill then makes
    the sparse LU 5x slower than the dense Cholesky, measured 0.15 s against 0.03 s at
    m = 897), else SuperLU's LU of the sparse grounded matrix in a symmetric minimum-degree
    order without pivoting (positive definite). No eigendecomposition: m^3 / 3 flops at
    most, not ~10 m^3.
    """

    def __init__(self, E):
        E = sp.csr_matrix(E)
        m = E.shape[0]
        self._m = m
        n_comp, comp = component_labels(E)
        rowsum = np.asarray(E.sum(axis=1)).ravel()
        scale = np.bincount(comp, np.abs(E.diagonal()), minlength=n_comp)
        singular = np.abs(np.bincount(comp, rowsum, minlength=n_comp)) <= 1e-10 * scale
        first = np.full(n_comp, -1)
        first[comp[::-1]] = np.arange(m)[::-1]
        keep = np.ones(m, dtype=bool)
        keep[first[singular]] = False
        self._keep = np.flatnonzero(keep)
        # the normalized constants of the singular components (m x s, sparse)
        rows = np.flatnonzero(singular[comp])
        cols = np.cumsum(singular) - 1
        sizes = np.bincount(comp, minlength=n_comp)
        self._null = sp.csr_matrix(
            (1.0 / np.sqrt(sizes[comp[rows]]), (rows, cols[comp[rows]])),
            shape=(m, int(singular.sum())))
        # each row's null column (-1: none) and entry, for _minus_null_part
        self._group = np.full(m, -1, dtype=np.int64)
        self._group[rows] = cols[comp[rows]]
        self._weight = np.zeros(m)
        self._weight[rows] = 1.0 / np.sqrt(sizes[comp[rows]])
        Er = E[self._keep][:, self._keep]
        self._chol = self._lu = None
        k = Er.shape[0]
        if k == 0:
            return
        if k <= DENSE_MAX and Er.nnz * DENSE_FILL >= k * k:
            import scipy.linalg

            try:
                self._chol = scipy.linalg.cho_factor(Er.toarray(), lower=True,
                                                     check_finite=False)
                return
            except np.linalg.LinAlgError:  # semi-definite to round-off: pivoted LU below
                pass
        from scipy.sparse.linalg import splu

        self._lu = splu(sp.csc_matrix(Er), permc_spec="MMD_AT_PLUS_A",
                        diag_pivot_thresh=0.0, options={"SymmetricMode": True})

    @property
    def factor_size(self):
        """Numbers stored in the factor (its apply reads each once per column)."""
        if self._chol is not None:
            return self._chol[0].size // 2
        if self._lu is not None:
            return self._lu.L.nnz + self._lu.U.nnz
        return 0

    def _project(self, S):
        if self._null.shape[1] == 0:
            return S
        return _minus_null_part(np.ascontiguousarray(S), self._group, self._weight,
                                self._null.shape[1])

    def __call__(self, S):
        S = self._project(np.asarray(S, dtype=np.float64))
        C = np.zeros((self._m, S.shape[1]))
        if self._chol is not None:
            from scipy.linalg.lapack import dpotrs

            # what scipy.linalg.cho_solve calls, without its per-call checks (a 5,000-point
            # fit applies a 10x10 factor 29 times)
            X, info = dpotrs(self._chol[0], S[self._keep], lower=int(self._chol[1]),
                             overwrite_b=True)
            if info != 0:
                raise ValueError(f"LAPACK dpotrs failed (info={info}).")
            C[self._keep] = X
        elif self._lu is not None:
            C[self._keep] = self._lu.solve(np.asarray(S[self._keep], order="F"))
        return self._project(C)


class AggregationCoarseSpace:
    """Aggregates of ``A``'s graph, their coarse operators and the coarsest one factorized.

    Parameters
    ----------
    A : csr_matrix (n, n), symmetric positive semi-definite
    max_coarse : int or None
        Aggregation passes continue while more aggregates remain. None:
        ``min(MAX_COARSE, sqrt(nnz(A)))``, so that the coarse factor (at most m^2 / 2
        numbers) costs less per application than a product with A (measured at 2x10^4
        points, 5-NN graph, 10 right-hand sides: 897 aggregates cut the Jacobi iterations
        from 60 to 29 but their dense factor cost as much per iteration as the product; the
        next pass, 3 aggregates, gives 36 at no cost per iteration). A pass that would
        leave one aggregate is not taken.
    strict : bool, default=False
        When the passes stop above ``max_coarse`` aggregates (the next pass would leave
        one), leave the space empty (falsy) instead of factorizing a coarse operator whose
        factor costs more per application than a product with A (measured at 10^5 points,
        graphlearning's 10-NN graph: 1,975 aggregates, a dense Cholesky of 0.5 s for 4 of
        33 iterations saved).
    kind : {"two_level", "multilevel"}
        The preconditioner (see the module docstring).
    components : bool, default=False
        One aggregate per connected component instead of aggregation passes (see
        :meth:`of_components`, which sets it; ``summary`` required).
    summary : RowSummary or None
        What one pass over ``A``'s rows told the caller
        (:func:`fastgssl.solvers._laplacian_matrix.row_summary`): the diagonal and the two
        tests of the first level, then not read again.

    Attributes
    ----------
    aggregates_ : ndarray of int of shape (n,)
        Coarsest aggregate of every vertex (-1: a vertex no aggregate holds, e.g. isolated).
    n_aggregates_ : int
        Coarsest aggregates.
    sizes_ : list of int
        Aggregates per pass.
    passes_ : int
        Aggregation passes made.
    too_fine_ : bool
        The passes stopped above ``max_coarse`` aggregates.
    """

    def __init__(self, A, max_coarse=None, kind="two_level", strict=False, summary=None,
                 components=False):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}.")
        if max_coarse is None:
            max_coarse = min(MAX_COARSE, int(np.sqrt(A.nnz)))
        self.kind = kind
        self._A = A
        self._members = None
        self._maps, self._dinvs, self.sizes_ = [], [], []
        if components:  # (of_components: two-level, one aggregate per component)
            if kind != "two_level" or summary is None:
                raise ValueError("components=True needs kind='two_level' and a summary.")
            self._set_components(A, summary)
            return
        n = A.shape[0]
        fine = np.arange(n, dtype=np.int64)  # coarsest aggregate of every vertex so far
        level = A
        # the first level's diagonal, edge test and sign test (None: the collapse test reads
        # the signs); a coarser level's are read from it
        if summary is None:
            fine_diagonal, edges, positive = A.diagonal(), _has_edges(A), None
        else:
            fine_diagonal, edges, positive = (summary.diagonal, summary.has_edges,
                                              summary.positive_coupling)
        mass = np.abs(fine_diagonal)  # summed fine diagonal of every aggregate
        while edges:
            agg, m = _aggregate(level)
            if m < 2 or m == level.shape[0]:
                # one aggregate holds everything, or no pair aggregated: stop
                break
            if strict and m > max_coarse and _next_pass_collapses(level, agg, m, positive):
                # the next pass would leave one aggregate: this level stays too fine and
                # is refused, so its Galerkin product is not formed (its aggregates still
                # give the locality order)
                self._maps.append(agg)
                self.sizes_.append(m)
                break
            fine = np.where(fine >= 0, agg[np.maximum(fine, 0)], -1)
            coarse = _galerkin(level, agg, m)
            if self._maps:  # the diagonal of the level below becomes an intermediate one
                d = level.diagonal()
                ok = d > _NULL_DIAGONAL * mass
                self._dinvs.append(np.where(ok, 1.0 / np.where(ok, d, 1.0), 0.0))
            used = agg >= 0
            mass = np.bincount(agg[used], mass[used], minlength=m)
            self._maps.append(agg)
            self.sizes_.append(m)
            level = coarse
            if m <= max_coarse:
                break
            edges, positive = _has_edges(level), None
        self.passes_ = len(self._maps)
        self.too_fine_ = bool(self._maps) and self.sizes_[-1] > max_coarse
        if not self._maps or (strict and self.too_fine_):
            self.aggregates_ = np.full(n, -1, dtype=np.int64)
            self.n_aggregates_ = 0
            return
        self.aggregates_ = fine
        self.n_aggregates_ = self.sizes_[-1]
        self._coarse_solve = _CoarseSolve(level)
        if kind == "multiplicative":
            from pyamg.util.linalg import approximate_spectral_radius

            d = fine_diagonal
            dinv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
            rho = approximate_spectral_radius(sp.diags(dinv) @ A)
            self._omega = 4.0 / (3.0 * rho)

    @classmethod
    def of_components(cls, A, summary):
        """The two-level space of the constants on A's connected components (one aggregate
        per component of two or more vertices; Nicolaides 1987): for a nonsingular ``A``
        whose diagonal barely dominates (a Laplacian plus a small ridge, the Dirichlet
        block of label propagation) each component's constant is Jacobi's slowest mode,
        with eigenvalue about its rows' sum over their diagonal. Where the aggregation
        refuses a space (too fine to factorize cheaply), this one costs a few numbers: its
        coarse operator is diagonal, ``E_cc = 1_c^T A 1_c``, the sum of the component's
        row sums (``summary``, a :class:`~fastgssl.solvers._laplacian_matrix.RowSummary`).
        Measured (10^5-point 10-NN Laplacian + 1e-6 I, 10 point sources, rtol 1e-8): 32
        Jacobi-PCG iterations against 51.

        A component whose ``E_cc`` is within the round-off of its row sums (``4 row nnz
        eps`` times its ``abs_sums``) is left out: its sign would not be known, and the
        correction must stay positive definite. ``passes_`` is 0 (no aggregation pass).
        """
        return cls(A, summary=summary, components=True)

    def _set_components(self, A, summary):
        """The aggregates and coarse solve of :meth:`of_components`."""
        m, labels = component_labels(A)
        labels = labels.astype(np.int64)
        sizes = np.bincount(labels, minlength=m)
        row_nnz = int(np.diff(A.indptr).max()) if A.nnz else 1
        coarse = np.bincount(labels, summary.sums, minlength=m)
        noise = 4.0 * row_nnz * np.finfo(np.float64).eps * np.bincount(
            labels, summary.abs_sums, minlength=m)
        kept = (sizes >= 2) & (coarse > noise)
        renumber = np.full(m, -1, dtype=np.int64)
        renumber[kept] = np.arange(int(kept.sum()))
        self.passes_ = 0
        self.too_fine_ = False
        self.aggregates_ = renumber[labels]
        self.n_aggregates_ = int(kept.sum())
        self._maps, self.sizes_ = [self.aggregates_], [self.n_aggregates_]
        if self.n_aggregates_:
            self._coarse_solve = _CoarseSolve(sp.diags(coarse[kept]).tocsr())

    def __bool__(self):
        return self.n_aggregates_ > 0

    def locality_order(self):
        """A vertex order in which every aggregate of every level is contiguous (coarsest
        first, then the finer ones inside it, the input order inside a first-level
        aggregate; vertices of no aggregate last): most neighbours of a vertex share its
        small aggregate, so a product with A reads a window of the block, unlike reverse
        Cuthill-McKee on the expander-like kNN graphs of high-dimensional data."""
        keys = [self._maps[0]]
        for agg in self._maps[1:]:
            keys.append(np.where(keys[-1] >= 0, agg[np.maximum(keys[-1], 0)], -1))
        big = np.iinfo(np.int64).max
        return np.lexsort([np.where(k >= 0, k, big) for k in keys]).astype(np.int64)

    def permute(self, order, A):
        """Follow the solver's order: vertex i of the new order is vertex ``order[i]``;
        ``A`` is the permuted matrix."""
        self._A = A
        self._maps[0] = np.ascontiguousarray(self._maps[0][order])
        self.aggregates_ = np.ascontiguousarray(self.aggregates_[order])
        self._members = None

    def _restrict(self, R):
        """``P_L^T R``: per-chunk partial sums for a few aggregates, per-aggregate member
        lists (built once per order) for many, whose (64, m, r) partials would cost more
        than the sums (:func:`fastgssl._sparse_blocks.grouped_sums`)."""
        agg, m = self.aggregates_, self.n_aggregates_
        if m * K.N_CHUNKS * 4 <= agg.shape[0]:
            return K.aggregate_sums(agg, m, R)
        if self._members is None:
            used = np.flatnonzero(agg >= 0)
            members = used[np.argsort(agg[used], kind="stable")]
            ptr = np.zeros(m + 1, dtype=np.int64)
            np.cumsum(np.bincount(agg[used], minlength=m), out=ptr[1:])
            self._members = (ptr, members.astype(np.int64))
        return K.grouped_sums(*self._members, R)

    def describe(self):
        if not self.passes_:
            return f"{self.kind}: the constants of {self.n_aggregates_} component(s)"
        return (f"{self.kind}: {self.passes_} aggregation passes, aggregates per pass "
                f"{self.sizes_}")

    def precondition(self, dinv, R, Z):
        """``Z = M^-1 R`` (see the module docstring); return the column products ``R^T Z``."""
        if self.kind == "two_level":
            C = np.ascontiguousarray(self._coarse_solve(self._restrict(R)))
            return K.jacobi_coarse_dot(dinv, self.aggregates_, C, R, Z)
        if self.kind == "multiplicative":
            return self._multiplicative(dinv, R, Z)
        # multilevel: restrict level by level, then add the corrections on the way down
        sums = [K.aggregate_sums(self._maps[0], self.sizes_[0], R)]
        for agg, m in zip(self._maps[1:], self.sizes_[1:]):
            sums.append(K.aggregate_sums(agg, m, sums[-1]))
        C = self._coarse_solve(sums[-1])
        for lvl in range(len(self._maps) - 2, -1, -1):
            C = self._dinvs[lvl][:, None] * sums[lvl] + _prolong(C, self._maps[lvl + 1])
        return K.jacobi_coarse_dot(dinv, self._maps[0], np.ascontiguousarray(C), R, Z)

    def _multiplicative(self, dinv, R, Z):
        """Symmetric two-level cycle: Jacobi, coarse correction, Jacobi (two products)."""
        A, agg = self._A, self.aggregates_
        od = self._omega * dinv
        X = od[:, None] * R
        T = np.empty_like(R)
        K.residual(A.indptr, A.indices, A.data, R, X, T)
        C = np.ascontiguousarray(self._coarse_solve(self._restrict(T)))
        X += _prolong(C, agg)
        K.residual(A.indptr, A.indices, A.data, R, X, T)
        Z[...] = X + od[:, None] * T
        return K.column_dot(R, Z)


def _aggregation_or_warn(Q, kind, strict, stacklevel, summary=None):
    """``AggregationCoarseSpace(Q, kind, strict, summary)``, or None with a ResourceWarning
    naming the setup and the bytes when it does not fit in memory (the solve then goes on
    with Jacobi alone)."""
    try:
        return AggregationCoarseSpace(Q, kind=kind, strict=strict, summary=summary)
    except MemoryError:
        warnings.warn(
            f"LaplacianSolver: the coarse space of a {Q.shape[0]}-vertex matrix with {Q.nnz} "
            f"entries ({Q.data.nbytes + Q.indices.nbytes + Q.indptr.nbytes} bytes; its "
            f"aggregation makes a copy and Galerkin products of about that size) did not "
            f"fit in memory; the solve goes on with Jacobi alone (coarse_space=None).",
            ResourceWarning, stacklevel=stacklevel)
        return None
