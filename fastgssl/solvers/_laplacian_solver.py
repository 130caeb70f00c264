"""Solves with graph-Laplacian regularizers: ``Q X = B`` for many right-hand sides.

Implements the linear-algebra kernel of the data-dependent kernel (Lever et al. 2012:
``Q z_i = e_{s_i}`` for hundreds of subsample points, ``Q = R^p`` by p chained solves) and
of the harmonic / label-propagation solutions (Bengio et al. 2005), for ``Q`` = ``L``, ``L_norm``,
``L + ridge I``, ... (symmetric positive semi-definite, sparse).

Methods
-------
``"cg"``
    Block Jacobi-preconditioned CG (:mod:`fastgssl.solvers._block_pcg`): the columns of a
    panel (``block_size``) in lock-step, one sparse-times-block product per iteration; the
    Jacobi preconditioner may get an additive coarse correction on aggregates of the graph
    (:mod:`fastgssl.solvers._coarse_space`), which holds the slow modes of near-separate
    clusters (87 -> 34 iterations on a 10^5-point 10-class kNN graph), where it pays
    (below).
``"amg"``
    The same block CG preconditioned by one V-cycle of aggregation multigrid configured
    for graph Laplacians (:mod:`fastgssl.solvers._multigrid`).
``"direct"``
    Sparse LU (SuperLU) of ``Q``, grounded (one vertex per singular component removed)
    when ``Q`` is singular.  Fill-in makes it impractical beyond a few thousand vertices
    on kNN graphs of high-dimensional data.
``"auto"`` (the measured rule, see ``bench/bench_solvers.py``)
    ``"direct"`` when ``n <= 2000``; otherwise ``"cg"`` first, because on kNN graphs of
    high-dimensional data Jacobi-PCG needs few iterations (~60 at n = 64,000) and each
    costs one product, whereas an AMG-PCG iteration costs about as much as ~6 of them.
    If the first ``solve`` needs more than ``switch_iterations`` (default 150) Jacobi
    iterations (poorly conditioned graphs, e.g. low-dimensional data or long chains), the
    multigrid hierarchy is built and the unconverged columns continue with AMG-PCG from
    their current iterates; later solves use ``"amg"`` directly.

Setup priced by what it saves (``coarse_space="auto"``, the default): the coarse space is
built at setup on a nonsingular matrix whose diagonal barely dominates (the median row's
``|row sum| / diagonal`` at most 0.01: a small ridge, label propagation's Dirichlet block;
where its aggregation is refused as too fine, the constants of the connected components,
:meth:`~fastgssl.solvers._coarse_space.AggregationCoarseSpace.of_components`), else during
the first solve when a probe of its first Jacobi-PCG steps (their smallest Ritz value, the
residual's rate) says it pays: the rule and its measurements in
:mod:`fastgssl.solvers._coarse_pricing`.

Iterative methods run on ``Q`` permuted once into a locality order (``reorder="auto"``
from ``REORDER_MIN_N`` = 20,000 vertices), chosen at a solve: for right-hand sides nonzero on
few rows (labeled points, their neighbours, point sources) the sources' order, graph Voronoi
cells around them grouped by class (``_laplacian_matrix._sources_order``: 10 columns times
10-NN graphs of 10-class mixtures of 10^6 points, 190 and 81 ms against 237 and 97 ms in
the aggregates' order, docs/scripts/first_fit_round4_order.txt); else the aggregates' order
when an aggregation ran (also one refused as a coarse space; the aggregation runs on the
input order: 40 iterations on the 10^6-point inverted-file graph, 69 in the RCM order), else
reverse Cuthill-McKee. Priced too: below ``REORDER_EAGER_MIN_N`` = 10^5 vertices the first
solve runs in the input order and a second solve of the same setup orders; from 10^5 the
first solve of ``REORDER_EAGER_MIN_COLUMNS`` = 2 or more columns orders, not one column (its
8 MB stay in cache at 10^6: first solves ordered 3.8 and 6.8 s, unordered 2.6 and 4.8).
The threshold moved with the machines and the order's cost (2x10^5, then 10^6 from the
eleventh round, 10^5 from the eighteenth: 6-11 % faster first solves at 10^5 on its Xeon
with the unit permutation; docs/benchmarks.md, issue 54). Inputs and outputs keep their order.

Singular ``Q`` (no ridge): solutions are those of the pseudo-inverse, per connected
component: the right-hand sides are projected onto the range of ``Q`` (the orthogonal
complement of the null space ``N``) and the solutions are made orthogonal to ``N``.
``N`` is detected automatically for ``Q = L`` (constants per component); pass it
(``fastgssl.regularizers.laplacian_null_space``) for ``L_norm``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from numba import get_num_threads
from scipy.sparse.linalg import splu
from sklearn.exceptions import ConvergenceWarning

from fastgssl import _sparse_blocks as K
from fastgssl._deprecation import renamed, renamed_attribute
from fastgssl._threads import numba_threads, small_blas
from fastgssl._unit_laplacian import UNIT_MIN_NNZ, permuted_unit, spmm_dot_unit, unit_form
from fastgssl._validation import (
    MAX_POWER,
    check_bounded_int,
    check_finite_result,
    check_no_complex,
    check_positive,
)
from fastgssl.regularizers import LaplacianPower

from ._block_pcg import block_pcg
from ._coarse_pricing import COARSE_PROBE_ITERATIONS, CoarsePricing, _barely_dominant
from ._coarse_space import AggregationCoarseSpace, _aggregation_or_warn
from ._laplacian_matrix import (
    _as_csr,
    _check_matrix,
    _checked_null_space,
    _locality_order,
    _permuted,
    row_summary,
)
from ._multigrid import BlockMultigrid
from ._null_space import ComponentNullSpace, DenseNullSpace
from ._solve_info import SolveInfo

__all__ = ["LaplacianSolver", "SolveInfo"]

DIRECT_MAX_N = 2000
# the thresholds of the locality order and of its first solve (module docstring)
REORDER_MIN_N, REORDER_EAGER_MIN_N, REORDER_EAGER_MIN_COLUMNS = 20_000, 100_000, 2
# panels of right-hand sides: at least PANEL_MIN columns (one read of the matrix serves them
# all; 10 classes in one panel), else as many as keep one (n, block) array at PANEL_CACHE
# numbers (1 MB: a block iteration's five arrays stay in cache), never more than PANEL_MAX
# numbers per array (memory); several panels of a multiple of a cache line's PANEL_LINE
# numbers (see block_size)
PANEL_MIN, PANEL_CACHE, PANEL_MAX, PANEL_LINE = 10, 1 << 17, 1 << 25, 8
_POWER_HINT = (
    " Each power is one chained solve (and multiplies the condition number): powers "
    "beyond a few tens only make the solve slower and less accurate."
)
SWITCH_ITERATIONS = 150
METHODS = ("auto", "amg", "cg", "direct")
COARSE_SPACES = ("auto", "two_level", "multilevel", "multiplicative", None)
COARSE_AUTO = "two_level"


def _panel_width(n, r):
    """Right-hand sides per panel (see ``block_size``): at most the cache's width; ``r``
    columns that need several panels in panels of a multiple of ``PANEL_LINE`` columns
    (whole cache lines: 50 columns at 10^5 rows in six of 8 and one of 2), else (the
    memory cap below 8 columns) in panels of equal width."""
    widest = max(1, min(r, max(PANEL_MIN, PANEL_CACHE // n), PANEL_MAX // n))
    if r > widest >= PANEL_LINE:
        return widest - widest % PANEL_LINE
    return -(-r // -(-r // widest)) if r else widest


class LaplacianSolver(CoarsePricing):
    """Set up once, then solve ``Q^p X = B`` for one or many right-hand sides.

    Parameters
    ----------
    Q : sparse matrix (n, n) or fastgssl.regularizers.LaplacianPower
        Symmetric positive semi-definite: ``L``, ``L_norm``, ``L + ridge I``...  A
        :class:`~fastgssl.regularizers.LaplacianPower` ``R^p`` is solved as ``p`` chained
        solves with ``R``.
    solver : {"auto", "amg", "cg", "direct"}, default="auto"
        The solve method; see the module docstring for the rule behind "auto".
        ``method`` is its former name (deprecated: a ``DeprecationWarning``).
    rtol : float, default=1e-8
        Relative residual ``||b - R x|| <= rtol ||b||`` per column and per chained solve.
    max_iter : int or None, default=None
        Iteration cap per chained solve (None: ``max(1000, n // 10)`` for "cg", 500 for
        "amg"). ``maxiter`` is its former name (deprecated: a ``DeprecationWarning``).
    power : int, default=1
        Solve with ``Q^power`` by ``power`` chained solves (multiplies the power of a
        :class:`LaplacianPower` input).
    null_space : "auto", None or ndarray of shape (n, m), default="auto"
        Null space of a singular ``Q``: "auto" detects per-component constants (exact for
        ``L``); None declares ``Q`` nonsingular; an array gives it explicitly (orthonormal
        columns, e.g. :func:`fastgssl.regularizers.laplacian_null_space` for ``L_norm``).
    switch_iterations : int, default=150
        "auto" only: Jacobi iterations after which the multigrid hierarchy is built.
    block_size : int or None, default=None
        Right-hand sides solved together in one block (a panel).  None: at least 10 (the
        matrix is read once per iteration for all of them: the classes of 10-class data),
        more while one (n, block) array stays under 2^17 numbers (1 MB: the iteration's
        five block arrays stay in cache), never more than 2^25 numbers (256 MB) per array;
        columns that need several panels go in panels of a multiple of 8 (a gathered row
        of the block then spans whole cache lines: 50 columns at 10^5 rows in six panels
        of 8 and one of 2, not five of 10, whose 80-byte rows span two lines each).  The
        block iteration is memory-bound: 50 Poisson-learning columns on one thread, panels
        of 8 / 10 / 16 / 17 columns, 10^5 rows: 1.35 / 1.52 / 1.45 / 1.63 CPU s
        (docs/scripts/first_fit_round17_panels.txt; the guide's "cache-sized panels").  On
        a machine loaded beyond its cores narrow panels lose (many short parallel calls,
        each waiting for a descheduled thread).
    reorder : {"auto", "aggregates", "rcm", None}, default="auto"
        Locality order of the iterative methods: ``"aggregates"`` (the coarse space's
        aggregates contiguous, at setup; ``"rcm"`` without one; with ``coarse_space="auto"``
        it builds the coarse space at once), ``"rcm"`` (reverse Cuthill-McKee at setup; the
        coarse space is then aggregated in that order), None (the input order), ``"auto"``:
        from 20,000 vertices, at a solve (module docstring), the sources' order, else the
        aggregates' (also of a coarse space priced in later), else ``"rcm"``.
    coarse_space : {"auto", "two_level", "multilevel", "multiplicative", None}, default="auto"
        ``"cg"`` only: the aggregation coarse correction of the Jacobi preconditioner
        (:mod:`fastgssl.solvers._coarse_space`; None: Jacobi alone). ``"auto"``:
        ``"two_level"`` (the least CPU time measured, ``bench/bench_coarse_space.py``:
        ``"multiplicative"`` halves the iterations but costs two more products each,
        ``"multilevel"`` needs about as many as ``"two_level"``), built at setup on a
        nonsingular matrix of at least 2x10^5 vertices whose median row barely dominates,
        else during the first solve that pays for it (module docstring: "Setup priced by
        what it saves"); an explicit kind is built at once.
    check_input : bool, default=True
        Check that ``Q`` is finite and symmetric with a nonnegative diagonal (O(nnz) work
        and a transposed copy); False for a matrix the caller built from a checked graph.
    amg_options : dict or None
        Passed to :class:`fastgssl.solvers._multigrid.BlockMultigrid` (``smooth``,
        ``strength_theta``, ``max_coarse``, ``sweeps``).

    Attributes
    ----------
    solver_ : str
        Method in use ("cg", "amg" or "direct"; "auto" may switch "cg" to "amg");
        ``method_`` is its former name (deprecated).
    n_ : int
    null_space_ : ndarray of shape (n, m) or None
    order_ : ndarray of int of shape (n,) or None
        The locality order (the solver works on ``Q[order_][:, order_]``), or None.
    coarse_space_ : AggregationCoarseSpace or None
        The aggregates of the coarse correction (``n_aggregates_``, ``passes_``); with
        ``coarse_space="auto"`` None until a solve has priced it in.
    coarse_probe_ : float or None
        The median over the columns of the smallest Ritz value of ``D^-1 Q`` at the last
        look of a solve that priced the coarse space in
        (:mod:`fastgssl.solvers._coarse_pricing`), else None.
    setup_time_ : float
    multigrid_ : BlockMultigrid or None
        The hierarchy (``operator_complexity``, ``sizes``) when built.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from fastgssl.solvers import LaplacianSolver
    >>> W = sp.diags([np.ones(4), np.ones(4)], [-1, 1], shape=(5, 5))  # a path
    >>> L = sp.diags(np.asarray(W.sum(1)).ravel()) - W
    >>> solver = LaplacianSolver(L, solver="cg")
    >>> b = np.array([1.0, 0.0, 0.0, 0.0, -1.0])
    >>> x, info = solver.solve(b)
    >>> bool(info), abs(round(float(x.sum()), 12))
    (False, 0.0)
    """

    def __init__(self, Q, solver="auto", rtol=1e-8, max_iter=None, power=1, *,
                 null_space="auto", switch_iterations=SWITCH_ITERATIONS, block_size=None,
                 amg_options=None, reorder="auto", coarse_space="auto", check_input=True,
                 method=None, maxiter=None):
        # the setup's kernels run on the cores other jobs leave free, as the solve's
        with numba_threads(None):
            self._setup(Q, solver, rtol, max_iter, power, null_space, switch_iterations,
                        block_size, amg_options, reorder, coarse_space, check_input, method,
                        maxiter)

    def _setup(self, Q, solver, rtol, max_iter, power, null_space, switch_iterations,
               block_size, amg_options, reorder, coarse_space, check_input, method, maxiter):
        t0 = time.perf_counter()
        solver = renamed("LaplacianSolver", "method", "solver", method, solver, "auto",
                         stacklevel=4)
        max_iter = renamed("LaplacianSolver", "maxiter", "max_iter", maxiter, max_iter, None,
                           stacklevel=4)
        if not isinstance(solver, str) or solver not in METHODS:
            raise ValueError(f"solver must be one of {list(METHODS)}, got {solver!r}.")
        power = check_bounded_int(power, "power", low=1, high=MAX_POWER, hint=_POWER_HINT)
        self.rtol = check_positive(rtol, "rtol")
        if max_iter is not None and (not isinstance(max_iter, (int, np.integer))
                                     or max_iter < 1):
            raise ValueError(f"max_iter must be a positive integer or None, got {max_iter!r}.")
        self.max_iter = max_iter
        self.solver = solver
        self.switch_iterations = check_bounded_int(switch_iterations, "switch_iterations",
                                                   low=1)
        if block_size is not None and (not isinstance(block_size, (int, np.integer))
                                       or block_size < 1):
            raise ValueError(f"block_size must be a positive integer or None, got "
                             f"{block_size!r}.")
        self.block_size = block_size
        if reorder not in ("auto", "rcm", "aggregates", None):
            raise ValueError(f"reorder must be 'auto', 'rcm', 'aggregates' or None, got "
                             f"{reorder!r}.")
        if coarse_space not in COARSE_SPACES:
            raise ValueError(f"coarse_space must be one of {list(COARSE_SPACES)}, got "
                             f"{coarse_space!r}.")
        self.amg_options = dict(amg_options or {})
        if isinstance(Q, LaplacianPower):
            power = check_bounded_int(power * Q.power, "power (times the power of Q)",
                                      low=1, high=MAX_POWER, hint=_POWER_HINT)
            Q = Q.base
        self.power = int(power)
        Q = _as_csr(Q)
        n = Q.shape[0]
        if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or n == 0:
            raise ValueError(f"Q must be a nonempty square matrix, got shape {Q.shape}.")
        summary = row_summary(Q)
        diag = summary.diagonal
        self._A = Q
        if check_input:  # (the unit form: the first unordered solve's, a faster check)
            _check_matrix(Q, diag, summary.abs_sums, unit=self._unit_form())
        self.n_ = n
        # null space
        self._null = None  # in the solver's order (set below)
        if isinstance(null_space, str):
            if null_space != "auto":
                raise ValueError(f"null_space must be 'auto', None or an array, got "
                                 f"{null_space!r}.")
            # A component's constant vector is a null vector when Q N vanishes up to the
            # round-off of forming Q N (row nnz * eps * |Q| |N|): a ridge above round-off,
            # however small, makes Q nonsingular and is solved as such.
            null = ComponentNullSpace.detect(Q, sums=(summary.sums, summary.abs_sums))
        elif null_space is None:
            null = None
        else:
            null = DenseNullSpace(_checked_null_space(Q, null_space))
        self.multigrid_ = None
        self.lu_ = None
        self.coarse_space_ = None
        if solver == "auto":
            self.solver_ = "direct" if n <= DIRECT_MAX_N else "cg"
        else:
            self.solver_ = solver
        # the iterative methods work in a locality order (inputs and outputs are permuted):
        # the aggregates of the coarse space (built first, in the input order) or RCM
        space = None
        # "auto": the coarse space is priced at the first solve that needs it (see
        # _solve_once); an explicit kind is built now and gives the locality order
        # (and reorder="aggregates" asks for the aggregates now)
        # a nonsingular one whose diagonal barely dominates: now; else the probe of the
        # first solve (singular: slow modes only where the graph clusters)
        eager = (self.solver_ == "cg" and coarse_space == "auto" and reorder != "aggregates"
                 and null is None and _barely_dominant(summary.sums, diag))
        self.coarse_probe_ = None
        self._coarse_pending = (self.solver_ == "cg" and coarse_space == "auto"
                                and reorder != "aggregates" and not eager)
        if self.solver_ == "cg" and coarse_space is not None and not self._coarse_pending:
            kind = COARSE_AUTO if coarse_space == "auto" else coarse_space
            aggregation = _aggregation_or_warn(Q, kind, eager, stacklevel=4, summary=summary)
            space = aggregation or None
            if eager and aggregation is not None and not aggregation:
                # refused or nothing to aggregate: the components' constants (diagonal E)
                space = AggregationCoarseSpace.of_components(Q, summary) or None
        else:
            aggregation = None
        self.coarse_space_ = space
        self._null_input = self._null = null
        self._dinv = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
        self.order_ = self._inverse_order = self._Q_input = None
        # the aggregates that give a deferred locality order (also refused ones: see below)
        self._order_source = aggregation if aggregation is not None and aggregation.passes_ \
            else None
        self._order_deferred = False
        self._solves = 0
        if self.solver_ != "direct" and (reorder in ("rcm", "aggregates") or (
                reorder == "auto" and n >= REORDER_MIN_N)):
            # the input-order matrix a priced-in coarse space aggregates (the caller holds
            # it during the first solve; dropped after it: the cache keeps one)
            self._Q_input = Q if self._coarse_pending else None
            if reorder == "auto" and self.solver_ == "cg":
                # the order waits for right-hand sides (the sources' order, module
                # docstring): the first solve's from REORDER_EAGER_MIN_N, else the second's
                self._order_deferred = True
            else:
                self._apply_order(self._order_for(reorder))
        if self.solver_ == "direct":
            self._setup_direct()
        elif self.solver_ == "amg":
            self._setup_amg()
        self.setup_time_ = time.perf_counter() - t0

    def _order_for(self, reorder="auto", B=None):
        # (a space of components' constants orders nothing: the refused aggregation does)
        space = self.coarse_space_
        source = space if space is not None and space.passes_ else self._order_source
        return _locality_order(self._A, B, None if reorder == "rcm" else source)

    def _apply_order(self, order):
        """Work in ``order`` from now on: the matrix, the Jacobi diagonal, the null space and
        the coarse space (all in the input order until now) permuted once. Each row of the
        permuted matrix keeps its entries in the stored order of its source row (not
        sorted: the sort was 0.64 of 1.12 s at 10^6 vertices), so a row product sums the
        same terms in the same order in either order, the same numbers bit for bit."""
        n = self.n_
        self.order_ = order
        self._inverse_order = np.empty(n, dtype=np.int64)
        self._inverse_order[order] = np.arange(n)
        unit = self._unit_form()
        if unit is None:
            self._A = _permuted(self._A, order, self._inverse_order, sort_rows=False)
        else:  # (the same matrix, with its unit form, without reading its entries)
            self._A, self._unit = permuted_unit(self._A, unit, order, self._inverse_order)
            self._unit_of = self._A
        self._dinv = self._dinv[order]
        if self.coarse_space_ is not None:
            self.coarse_space_.permute(order, self._A)
        if self._null_input is not None:
            self._null = self._null_input.permuted(order)
        self._order_source = None

    method = renamed_attribute("LaplacianSolver", "method", "solver")
    maxiter = renamed_attribute("LaplacianSolver", "maxiter", "max_iter")
    method_ = renamed_attribute("LaplacianSolver", "method_", "solver_")

    @property
    def Q_(self):
        """The matrix ``Q`` (CSR, in the input order)."""
        if self.order_ is None:
            return self._A
        return _permuted(self._A, self._inverse_order, self.order_)

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        # SuperLU factors cannot be pickled: drop the factor, refactorize on load
        state = self.__dict__.copy()
        state["lu_"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self.solver_ == "direct" and getattr(self, "_keep", None) is not None:
            self._setup_direct()

    # ------------------------------------------------------------------ setup
    def _setup_direct(self):
        keep = np.ones(self.n_, dtype=bool)
        if self._null is not None:
            # ground one vertex per null vector: the largest entry of each basis vector
            keep[self._null.grounds()] = False
        self._keep = np.flatnonzero(keep)
        Qr = self._A[self._keep][:, self._keep].tocsc()
        if Qr.shape[0]:
            self.lu_ = splu(Qr, permc_spec="COLAMD")

    def _setup_amg(self):
        near_null = self._null.dense() if self._null is not None else np.ones((self.n_, 1))
        self.multigrid_ = BlockMultigrid(self._A, near_null, **self.amg_options)
        self._unit_of = None  # (pyamg sorts the rows of the matrix in place: dpos moved)

    # ------------------------------------------------------------------ solve
    @property
    def null_space_(self):
        """Orthonormal basis (n, m) of the null space in the input order, or None."""
        return None if self._null_input is None else self._null_input.dense()

    def _project(self, B):
        if self._null is None:
            return B
        return self._null.project(B)

    def _jacobi(self):
        """CG's preconditioner: Jacobi's (its inverse diagonal, for :func:`block_pcg`), with
        the coarse space's correction when there is one."""
        if self.coarse_space_ is None:
            return self._dinv
        return lambda R, Z: self.coarse_space_.precondition(self._dinv, R, Z)

    def _amg_precond(self, R, Z):
        Z[...] = self._project(self.multigrid_(R))
        return K.column_dot(R, Z)

    def _unit_form(self):
        """:func:`fastgssl._unit_laplacian.unit_form` of the working matrix from
        ``UNIT_MIN_NNZ`` entries (its block products then skip the -1 off the diagonal),
        else None; found once per matrix (the locality order permutes it with the matrix)."""
        if getattr(self, "_unit_of", None) is not self._A:
            A = self._A
            self._unit = None
            if A.nnz >= UNIT_MIN_NNZ:
                diag, dpos = unit_form(A.indptr, A.indices, A.data)
                self._unit = (diag, dpos) if diag.size else None
            self._unit_of = A
        return self._unit

    def _solve_once(self, B):
        """One solve with ``Q``; B is (n, r) C-contiguous, already projected."""
        r = B.shape[1]
        project = self._project if self._null is not None else None
        if self.solver_ == "direct":
            X = np.zeros_like(B)
            if self.lu_ is not None:
                X[self._keep] = self.lu_.solve(np.asarray(B[self._keep], order="F"))
            return X, np.zeros(r, dtype=np.int64), np.ones(r, dtype=bool), "direct"
        if self.solver_ == "amg":
            maxiter = self.max_iter or 500
            X, its, conv = block_pcg(self._A, B, self._amg_precond, rtol=self.rtol,
                                     max_iter=maxiter, project=project,
                                     unit=self._unit_form())
            return X, its, conv, "amg"
        maxiter = self.max_iter or max(1000, self.n_ // 10)
        auto = self.solver == "auto"
        first = min(maxiter, self.switch_iterations) if auto else maxiter
        X0, its = None, np.zeros(r, dtype=np.int64)
        todo = np.arange(r)
        conv = np.zeros(r, dtype=bool)
        if self._coarse_pending:
            # Jacobi first; after the probe's steps, the coarse space if it pays
            # (_coarse_pricing)
            coefficients, k = [], COARSE_PROBE_ITERATIONS
            price = lambda history: self._price_coarse(history, coefficients, r)  # noqa: E731
            X, its, conv = block_pcg(
                self._A, B, self._jacobi(), rtol=self.rtol, max_iter=first, project=project,
                checkpoint=(k, price), coefficients=coefficients, unit=self._unit_form())
            if conv.all() or self.coarse_space_ is None or its.max() >= first:
                return self._amg_after(B, X, its, conv, maxiter, auto, project)
            todo = np.flatnonzero(~conv)
            X0 = X
        Bt = B if todo.size == r else np.ascontiguousarray(B[:, todo])
        Xt, its_t, conv_t = block_pcg(
            self._A, Bt, self._jacobi(), rtol=self.rtol, project=project,
            X0=None if X0 is None else np.ascontiguousarray(X0[:, todo]),
            max_iter=max(1, first - int(its.max())), unit=self._unit_form())
        X = Xt if X0 is None else X0
        if X0 is not None:
            X[:, todo] = Xt
        its[todo] += its_t
        conv[todo] = conv_t
        return self._amg_after(B, X, its, conv, maxiter, auto, project)

    def _build_coarse(self, stacklevel):
        """The strict coarse space, priced in at a solve (True: built)."""
        t0 = time.perf_counter()
        self._coarse_pending = False
        Q_in = self._Q_input if self._Q_input is not None else self.Q_
        space = _aggregation_or_warn(Q_in, COARSE_AUTO, True, stacklevel=stacklevel)
        if space is None:
            return False
        if not space and space.passes_ and getattr(self, "_order_deferred", False):
            self._order_source = space  # refused (too fine): its order serves a later solve
        space = space or None
        if space is not None and self.order_ is not None:
            space.permute(self.order_, self._A)
        self.coarse_space_ = space
        self.setup_time_ += time.perf_counter() - t0
        return space is not None

    def _amg_after(self, B, X, its, conv, maxiter, auto, project):
        if conv.all() or not auto:
            return X, its, conv, "cg"
        # "auto": too many Jacobi iterations -> build the hierarchy, continue with AMG-PCG
        t0 = time.perf_counter()
        self._setup_amg()
        self.setup_time_ += time.perf_counter() - t0
        self.solver_ = "amg"
        todo = np.flatnonzero(~conv)
        Xt, its_t, conv_t = block_pcg(
            self._A, np.ascontiguousarray(B[:, todo]), self._amg_precond,
            X0=np.ascontiguousarray(X[:, todo]), rtol=self.rtol,
            max_iter=self.max_iter or 500, project=project, unit=self._unit_form(),
        )
        X[:, todo] = Xt
        its[todo] += its_t
        conv[todo] = conv_t
        return X, its, conv, "cg+amg"

    def solve(self, B):
        """Solve ``Q^power X = B``.

        Parameters
        ----------
        B : ndarray of shape (n,) or (n, r)

        Returns
        -------
        X : ndarray, same shape as B
            For singular ``Q``: the pseudo-inverse solution ``(Q^+)^power B`` (B projected
            onto the range, X orthogonal to the null space).
        info : SolveInfo
            Per-column status (0 converged, else iterations spent), iterations and
            relative residuals.

        Warns
        -----
        sklearn.exceptions.ConvergenceWarning
            When some column misses ``rtol`` (numbers given).
        """
        t0 = time.perf_counter()
        check_no_complex(B, "B")
        try:
            B = np.asarray(B, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"B must be a numeric array: {exc}") from None
        one_d = B.ndim == 1
        if one_d:
            B = B[:, None]
        if B.ndim != 2 or B.shape[0] != self.n_:
            raise ValueError(
                f"B must have shape ({self.n_},) or ({self.n_}, r), got {B.shape}."
            )
        r = B.shape[1]
        # (for the scaling below; NaN or inf where a column holds one: B checked in its pass)
        col_max = np.max(np.abs(B), axis=0) if B.size else np.zeros(r)
        if not np.isfinite(col_max).all():
            raise ValueError("B contains NaN or infinite values.")
        if getattr(self, "_order_deferred", False) and (self._solves or (
                self.n_ >= REORDER_EAGER_MIN_N and r >= REORDER_EAGER_MIN_COLUMNS)):
            # the locality order from these right-hand sides (module docstring); not
            # under a multigrid hierarchy built in the input order
            self._order_deferred = False
            if self.multigrid_ is None:
                t_order = time.perf_counter()
                with numba_threads(None):
                    self._apply_order(self._order_for(B=B))
                self.setup_time_ += time.perf_counter() - t_order
        self._solves = getattr(self, "_solves", 0) + 1
        # The solve is linear: scale every column by a power of two (exact) so that its
        # largest entry is in [1, 2).  Right-hand sides of 1e-300 would otherwise have norms
        # that underflow to 0 (CG then "converges" at X = 0) and 1e300 ones would overflow.
        col_scale = np.ones(r)
        nz = col_max > 0
        col_scale[nz] = np.exp2(np.floor(np.log2(col_max[nz])))
        if self.order_ is None:
            Bs = B / col_scale
        else:  # (one new n x r array, not two; numpy.take gathers rows faster than indexing)
            Bs = np.take(B, self.order_, axis=0)
            Bs /= col_scale
        with numba_threads(None):
            X = self._project(np.ascontiguousarray(Bs))
        iterations = np.zeros(r, dtype=np.int64)
        converged = np.ones(r, dtype=bool)
        methods = []
        rhs = X
        width = self.block_size or _panel_width(self.n_, r)
        if self.block_size is None and PANEL_MAX // self.n_ < min(r, PANEL_MIN):
            # (the memory cap, not the equal split of a few more than PANEL_MIN columns)
            warnings.warn(
                f"LaplacianSolver: {r} right-hand sides of {self.n_} rows are solved in "
                f"{-(-r // width)} panels of {width} columns (one (n, panel) array is capped "
                f"at {PANEL_MAX} numbers for memory); each panel reads the matrix again.",
                ResourceWarning, stacklevel=2)

        # the block kernels on the cores other jobs leave free (fastgssl._threads), BLAS on
        # one: OpenBLAS's idle threads spinning on the cores Numba's threads need next made
        # every iteration wait (5,000 points: a first Poisson fit 0.34 s instead of 0.037 s)
        with numba_threads(None), small_blas(0):
            for _ in range(self.power):
                rhs = X
                X = None if 0 < r <= width else np.empty_like(rhs)  # (one panel: its array)
                for c0 in range(0, r, width):
                    cols = slice(c0, min(r, c0 + width))
                    Xc, its, conv, used = self._solve_once(np.ascontiguousarray(rhs[:, cols]))
                    if X is None:
                        X = Xc
                    else:
                        X[:, cols] = Xc
                    iterations[cols] += its
                    converged[cols] &= conv
                    methods.append(used)
                X = self._project(X)
            # the true residual, its product compiled and parallel (scipy's of r columns is
            # single-threaded: 15 ms of a 0.5 s first fit at 10^5 points); the same sums
            # in the same order as scipy's rhs - A @ X
            A = self._A
            X = np.ascontiguousarray(X)
            AX = np.empty_like(X)
            unit = self._unit_form() if r > 1 else None  # (the same sums, -1s not read)
            if unit is None:
                K.spmm(A.indptr, A.indices, A.data, X, AX)
            else:
                spmm_dot_unit(A.indptr, A.indices, A.data, *unit, X, AX)
            if r > 1 and rhs.flags.c_contiguous:
                # the norms of rhs - AX and rhs (numpy's numbers) without n x r
                # temporaries: fresh pages cost 2.6 us each on a VM (10^5 x 50: 26 ms)
                rnorm, bnorm = K.residual_norms(rhs, AX, get_num_threads())
            else:  # (numpy's pairwise sums along a contiguous axis)
                rnorm = np.linalg.norm(rhs - AX, axis=0)
                bnorm = np.linalg.norm(rhs, axis=0)
        rel = np.where(bnorm > 0, rnorm / np.where(bnorm > 0, bnorm, 1.0), rnorm)
        # Judge every method by the true residual (the CG recurrence residual drifts from it
        # on ill-conditioned Q, e.g. a ridge of 1e-12: "converged" with a true residual 1e6x
        # above rtol was seen); 10x slack for the drift of a well-conditioned solve.
        floor = 1e3 * np.finfo(float).eps
        if self.solver_ == "direct":
            converged = rel <= max(self.rtol, floor)
        else:
            converged &= rel <= max(10 * self.rtol, floor)
        status = np.where(converged, 0, np.maximum(iterations, 1))
        used = "+".join(dict.fromkeys(methods))
        if not converged.all():
            bad = np.flatnonzero(~converged)
            warnings.warn(
                f"LaplacianSolver ({used}): {bad.size} of {r} right-hand side(s) did not "
                f"reach rtol={self.rtol:g}; worst relative residual {rel[bad].max():.3g} "
                f"after {iterations[bad].max()} iterations. Increase max_iter, add a ridge, "
                f"or use solver='amg'.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._Q_input = None
        if self.order_ is not None:
            X = np.take(X, self._inverse_order, axis=0)
        with np.errstate(over="ignore"):
            X *= col_scale  # (X is the solve's own array)
        check_finite_result(
            X, "the solution of LaplacianSolver.solve",
            hint="the system is too ill-conditioned for this right-hand side (add a ridge, "
                 "lower the power) or B is too large; rescale B",
        )
        info = SolveInfo(
            status=int(status[0]) if one_d else status,
            iterations=iterations,
            relative_residuals=rel,
            solver=used,
            time=time.perf_counter() - t0,
            extra={"panels": -(-r // width) if r else 0, "panel_width": width},
        )
        return (X[:, 0] if one_d else X), info

