"""When the coarse space pays: the pricing of ``LaplacianSolver(coarse_space="auto")``.

The aggregation coarse space (:mod:`fastgssl.solvers._coarse_space`) cuts the Jacobi-PCG
iterations where slow modes exist and costs a setup everywhere. ``"auto"`` builds it only
where setup and solve together beat the plain solve, decided from what is cheap to know.

**At setup.** On a large matrix whose diagonal barely dominates (at least
``COARSE_EAGER_MIN_N`` = 2x10^5 vertices and the median row's ``|row sum| / diagonal`` at
most 0.01), Jacobi's slow modes are known to be there when ``Q`` is nonsingular (a ridge of
1e-6, the Dirichlet block of label propagation: the near-null constants): the coarse space is
built at setup, its aggregates giving the locality order (graphlearning's 10^6-point graph,
10 point sources, rtol 1e-8: 42 iterations against 62,
``bench/results/priced_setup_round6_1m_gl.md``).

**The probe.** A singular one (a Laplacian: Poisson learning) has slow modes only where the
graph clusters, which its first solve probes: after its first ``COARSE_PROBE_ITERATIONS`` = 8
Jacobi-PCG steps, CG's coefficients give each column's smallest Ritz value of ``D^-1 Q``
(:func:`fastgssl.solvers._block_pcg.smallest_ritz_values`: a cluster's slow mode has an
eigenvalue near 0, which the Ritz values approach fast), and the coarse space is built when
their median is below ``COARSE_PROBE_RITZ`` = 0.01 (the columns then continue with it from
their iterates). The median over Poisson learning's 10 columns
after 8 steps: 0.0016 on the 10^6-point ``IVFGraph`` of a 10-class mixture (43 iterations
with the coarse space, 100 without) and 0.00036 on a 2x10^5-point exact 10-NN graph of one
(42 against 88); 0.057 on graphlearning's 10^6-point graph of a mixture of overlapping
classes (31 against 34: its setup cost more than it saved, 31.5 CPU s against 27.8) and
0.086 on a 2x10^5-point graph of one. The checkpoint below misjudged the clustered ones (the
residual rose while CG found the cluster modes: 88 iterations on the 2x10^5-point graph).
The probe costs nothing where it keeps Jacobi; where it builds, the restart loses its 8 steps
(51 iterations on the ``IVFGraph``, 34.8 CPU s against 31.8 for the coarse space built first
and 54.6 for Jacobi alone; ``docs/scripts/first_fit_round7_probe.txt``).

**The checkpoint.** In both cases above the aggregation is strict (see below), so that a
graph it cannot coarsen enough keeps Jacobi
(at 10^5 points it refused 10-NN mixture graphs after 0.1-0.17 CPU s of a 0.25-0.7 s solve:
priced below there). Everywhere else the coarse space is not built at the start: its setup
(aggregation passes, the Galerkin products, the coarse factorization) costs about
``COARSE_SETUP_PRODUCTS`` = 40 single-column products with ``Q`` (measured 20-70 at 2x10^4
and 10^5 points), and a block iteration of a panel of r columns about ``1 + r / 6`` of them,
so its price is ``k = ceil(40 / (1 + r / 6))`` Jacobi iterations (at least 4: 15 for 10
classes, 5 for 50 columns). The first solve runs Jacobi-PCG to that checkpoint; if columns
are still unconverged and the residual's rate over the last ``k / 2`` iterations (the best
residual of each half: CG's is not monotone) leaves more than
``max(2 k, COARSE_MIN_REMAINING)`` iterations to go (twice the price: the restart loses CG's
Krylov space and a coarse iteration costs more; at least 30: at 2x10^4 points 50 Poisson
columns extrapolated 22 and took 21 two-level iterations against Jacobi's 23, 3 % slower; 50
ridge columns extrapolated 40, took 27 against 48), the coarse space is built and those
columns continue with it from their iterates; otherwise (or when that rate shows no
progress, above 0.99 per iteration) Jacobi goes on undisturbed, and a later solve prices it
again. Once built, later solves use it from the start. Measured (MNIST, 5,000 images,
Poisson learning's 10 columns, one thread): Jacobi 69 iterations (0.048 CPU s), two-level
from the start 34 (0.046 s), priced 15 + 29 (0.049 s); a 10^5-point 10-NN mixture graph:
Jacobi needs 24 and the checkpoint at 15 keeps it (two-level would save 4 iterations for its
setup); 8 near-separate clusters (24,000 points, rtol 1e-10, 10 columns): Jacobi 78, priced
15 + 24. ``bench/bench_priced_setup.py`` times it against ``coarse_space=None`` and a scipy
Jacobi-cg loop. The coarse problem has at most ``sqrt(nnz(Q))`` aggregates (and 1,000), so
that its factor costs less per iteration than the product; when aggregation cannot get there
(the next pass would leave one aggregate) "auto" keeps Jacobi (a 10-NN graph of 10^5 mixture
points: 1,975 aggregates, a 0.5 s dense factorization for 33 -> 29 iterations).
"""

from __future__ import annotations

import numpy as np

from ._block_pcg import smallest_ritz_values

__all__ = []

# the checkpoint (module docstring): the setup of the two-level space costs about this many
# single-column products with Q (measured 20-70 at 2x10^4 and 10^5 points), a block
# iteration of r columns about 1 + r / BLOCK_SHARE of them
COARSE_SETUP_PRODUCTS, BLOCK_SHARE, COARSE_MIN_CHECK = 40, 6, 4
# a residual rate per iteration above this over the checkpoint's second half is a stall
COARSE_STALL_RATE = 0.99
# the checkpoint builds the coarse space when at least this many iterations remain (and 2 k)
COARSE_MIN_REMAINING = 30
# the probe of a large singular matrix: Jacobi-PCG steps, and the smallest Ritz value below
# which the coarse space is built
COARSE_PROBE_ITERATIONS, COARSE_PROBE_RITZ = 8, 0.01


def coarse_checkpoint(r):
    """Jacobi iterations of an r-column panel that cost what the coarse space's setup
    does: ``COARSE_SETUP_PRODUCTS`` single-column products over ``1 + r / BLOCK_SHARE``
    per block iteration (module docstring)."""
    return max(COARSE_MIN_CHECK, int(np.ceil(COARSE_SETUP_PRODUCTS / (1 + r / BLOCK_SHARE))))


class CoarsePricing:
    """The pricing decisions of :class:`~fastgssl.solvers.LaplacianSolver` (a mixin: it
    reads the solver's matrix, preconditioner and order, and calls its ``_build_coarse``).
    """

    def _price_coarse(self, history, k):
        """At the checkpoint k: build the coarse space when the iterations still needed at
        the rate of the last k / 2 extrapolate to more than 2 k and COARSE_MIN_REMAINING
        (this module's docstring); True: restart with it."""
        # CG's residual is not monotone: the best of each half, half the iterations apart
        half = k // 2
        early, late = max(history[:half + 1].min(), 1e-300), max(history[half:].min(), 1e-300)
        rate = (late / early) ** (1.0 / max(1, k - half))
        if rate >= COARSE_STALL_RATE:  # no measurable progress: no basis to price on
            return False
        remaining = np.log(self.rtol / late) / np.log(rate)
        # the restart loses the Krylov space and a coarse iteration costs more: the
        # iterations to go must pay the setup twice
        if remaining <= max(2 * k, COARSE_MIN_REMAINING):
            return False
        return self._build_coarse(stacklevel=7)

    def _probe_coarse(self, coefficients):
        """At step ``COARSE_PROBE_ITERATIONS`` of the first solve of a large singular matrix
        whose diagonal barely dominates: build the coarse space when the median over the
        active columns of the smallest Ritz value of ``D^-1 Q`` is below
        ``COARSE_PROBE_RITZ`` (this module's docstring); True: restart with it."""
        self._coarse_probe = False
        theta = smallest_ritz_values(coefficients)
        theta = theta[np.isfinite(theta)]
        if not theta.size:  # half the columns converged already: nothing slow to remove
            return False
        self.coarse_probe_ = float(np.median(theta))
        if self.coarse_probe_ >= COARSE_PROBE_RITZ:
            return False
        return self._build_coarse(stacklevel=7)
