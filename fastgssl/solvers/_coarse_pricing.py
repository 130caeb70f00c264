"""When the coarse space pays: the pricing of ``LaplacianSolver(coarse_space="auto")``.

The aggregation coarse space (:mod:`fastgssl.solvers._coarse_space`) cuts the Jacobi-PCG
iterations where slow modes exist and costs a setup everywhere. ``"auto"`` builds it only
where setup and solve together beat the plain solve, decided from what is cheap to know.

**At setup.** On a matrix whose diagonal barely dominates (the median row's ``|row sum| /
diagonal`` at most 0.01), Jacobi's slow modes are known to be there when ``Q`` is
nonsingular (a ridge of 1e-6, the Dirichlet block of label propagation: the near-null
constants): the coarse space is built at setup, its aggregates giving the locality order.
Measured: graphlearning's 10^6-point graph, 10 point sources, rtol 1e-8, 42 iterations
against 62 (``bench/results/priced_setup_round6_1m_gl.md``); below 2x10^5 vertices (where
the probe priced these matrices until the ninth round, wasting its 8 steps when it built)
a 2x10^4-point ridged 10-NN Laplacian with 10 and 50 point sources, rtol 1e-8, 1.10x and
1.53x faster than ``coarse_space=None`` setup included (the probe: 0.68x and 0.94x;
``bench/results/priced_setup_round9.md``), and label propagation's block on the real data
sets 0.36-1.03 of Jacobi's time, on the 10-class mixtures 0.86-1.23 (1.23 the overlapping
5,000-point one, where the probe cost 1.21-1.35; ``docs/scripts/first_fit_round9_solver.txt``).
Where that aggregation is refused (too fine: a 10^5-point 10-NN graph of a 10-class
mixture), the coarse space holds the constants of the connected components instead
(:meth:`~fastgssl.solvers._coarse_space.AggregationCoarseSpace.of_components`): Jacobi's
slowest modes of such a matrix, at the price of a diagonal coarse operator (that ridged
Laplacian with 10 point sources, rtol 1e-8: 32 iterations against 51, 0.58 against 0.75
CPU s, ``bench/results/priced_setup_round17.md``).

**The probe.** Everywhere else the first solve runs ``COARSE_PROBE_ITERATIONS`` = 8
Jacobi-PCG steps and looks at two things (the columns then continue with the coarse space,
from their iterates, or with Jacobi, undisturbed):

* CG's coefficients give each column's smallest Ritz value of ``D^-1 Q``
  (:func:`fastgssl.solvers._block_pcg.smallest_ritz_values`): a cluster's slow mode has an
  eigenvalue near 0, which the Ritz values approach fast. A median over the columns below
  ``COARSE_PROBE_RITZ`` = 0.01 builds the coarse space.
* Without a cluster, what the coarse space would save against its setup. The steps still
  to go, R, are the larger of two estimates: the worst column's residual at its rate over
  the 8 steps (the best residual of the second half, CG's is not monotone), and CG's bound
  ``sqrt(kappa) / 2 log(2 res / rtol)`` for the condition number ``kappa = 2 / theta``
  (theta the Ritz value; ``D^-1 Q``'s spectrum lies in (0, 2]). With the coarse space the
  slow modes below ``COARSE_RITZ_AFTER`` = 0.15 are gone, so CG needs about ``sqrt(theta /
  0.15)`` of Jacobi's steps, each ``COARSE_STEP_COST`` = 1.45 times dearer. The probe builds
  when ``R (1 - 1.45 sqrt(theta / 0.15))`` exceeds ``k``, the price of the setup in block
  iterations (below). (Without Ritz values, when R exceeds ``T = max(k,
  COARSE_MIN_REMAINING)``, ``COARSE_MIN_REMAINING`` = 30.)

  The constants are the thirteenth round's measurements (``docs/scripts/
  first_fit_round13_pricing.py`` -> ``first_fit_round13_pricing.txt``, one thread, rtol
  1e-6, the learners' own systems on graphlearning's 10-NN graphs): the coarse space first
  took 0.32-0.83 of Jacobi's steps on MNIST, abalone, space_ga, a1a and the mixtures, which
  ``sqrt(theta / theta_c)`` fits with ``theta_c`` between 0.12 and 0.24 but space_ga's
  0.40; its steps cost 1.43-1.47 of Jacobi's on the 5,000-point systems with 10 columns.
  Until this round any R above T built: PWLL's system on the 5,000 MNIST images (theta
  0.066, R = 35) built after 8 steps and took 1.32-1.38x the time of Jacobi (28-31 steps
  against 39, each dearer); Poisson learning's (theta 0.038, R = 47 by the bound, 69
  Jacobi steps) still builds.

Measured (``docs/scripts/first_fit_round8.py`` -> ``first_fit_round8_probe.txt`` and, 11
runs of the small ones, ``..._probe_small.txt``; with the ninth round's faster products
``first_fit_round9_solver.txt``; the learners' rtol 1e-6, graphlearning's 10-NN graphs, one
thread, Poisson learning's system): on the MNIST images, letter, a1a, abalone and space_ga
the probe reads 31-146 iterations to go and builds; the solves take 0.39-1.02 of Jacobi's
time, setup included (abalone 0.45, space_ga 0.39, MNIST's 5,000- and 10,000-point systems
1.02 in the ninth round; 0.90 over 11 runs in the eighth). On a 10-class mixture whose
classes overlap (sep 0.5, the 5,000 and 2x10^4 points of ``bench/bench_single_fit.py``)
Poisson learning reads 16-19 and keeps Jacobi (the coarse space first would cost 1.11-1.26x). On
graphlearning's 10^6-point graph of such a mixture (round 7) the Ritz value is 0.057 and
the rate leaves about 18 iterations: Jacobi (34 iterations; with the coarse space 31, for
31.5 CPU s against 27.8). Clustered graphs build by their Ritz values: 0.0016 on the
10^6-point ``IVFGraph`` of a 10-class mixture (51 iterations, 100 without), 0.00036 on a
2x10^5-point exact 10-NN graph of one, 0.0005 on a 5,000-point one.

**Later looks.** A right-hand side may excite the slow modes only weakly at first (``B = L
x`` for a random x: its Ritz values after 8 steps are 0.44, after 16 8e-4). After 16, 32,
64, ... steps the coarse space is built when the Ritz value is below 0.01 and the rate of
the last half of the steps still leaves more than ``T`` iterations (a solve about to end
keeps Jacobi). A solve that kept Jacobi leaves the pricing to the next solve of the setup;
once built, the coarse space serves every later solve from its start.

**The price of the setup.** Its aggregation passes, Galerkin products and coarse
factorization cost about ``COARSE_SETUP_PRODUCTS`` = 40 single-column products with ``Q``
(measured 20-70 at 2x10^4 and 10^5 points), and a block iteration of a panel of r columns
about ``1 + r / 2.4`` of them (its vector updates included; measured in the thirteenth
round at 5,000 points: about 5 products at 10 columns, 1.7 for one column, whose steps run
in one compiled call): ``k = ceil(40 / (1 + r / 2.4))`` block iterations
(:func:`coarse_checkpoint`, at least 4: 8 for 10 classes, 29 for one column).

**The aggregation** is strict in both cases above, so that a graph it cannot coarsen enough
keeps Jacobi: the coarse problem has at most ``sqrt(nnz(Q))`` aggregates (and 1,000), so
that its factor costs less per iteration than the product; when aggregation cannot get there
(the next pass would leave one aggregate) "auto" keeps Jacobi (a 10-NN graph of 10^5 mixture
points: 1,975 aggregates, a 0.5 s dense factorization for 33 -> 29 iterations; at 10^5
points it refused 10-NN mixture graphs after 0.1-0.17 CPU s).

Rounds 5-7 priced it at a checkpoint of ``k`` Jacobi iterations (15 for 10 columns) by the
rate of its second half, took a stalled rate as no basis to build, and probed Ritz values
only on singular matrices from 2x10^5 vertices (``docs/scripts/first_fit_round8_before.txt``,
the same systems): it kept Jacobi on abalone's Poisson system (its residual's rate 0.986
per step over steps 8-16: 174 iterations, against 64 with the probe) and on a clustered
5,000-point mixture (85 and 46, against 37 and 25); it too built for the 5,000-point
overlapping mixture's label propagation (33 iterations), not for the 2x10^4-point one (43).
"""

from __future__ import annotations

import numpy as np

from ._block_pcg import smallest_ritz_values

__all__ = []

# the checkpoint (module docstring): the setup of the two-level space costs about this many
# single-column products with Q (measured 20-70 at 2x10^4 and 10^5 points), a block
# iteration of r columns about 1 + r / BLOCK_SHARE of them
COARSE_SETUP_PRODUCTS, BLOCK_SHARE, COARSE_MIN_CHECK = 40, 2.4, 4
# the probe builds the coarse space when more than this many iterations remain (and k)
COARSE_MIN_REMAINING = 30
# at the probe without a cluster: the smallest eigenvalue of the coarse-space preconditioned
# operator (CG's steps scale as 1 / sqrt of it), and the price of a step with the coarse
# space in steps of Jacobi's (module docstring)
COARSE_RITZ_AFTER, COARSE_STEP_COST = 0.15, 1.45
# the probe: Jacobi-PCG steps, and the smallest Ritz value below which the coarse space is
# built
COARSE_PROBE_ITERATIONS, COARSE_PROBE_RITZ = 8, 0.01


# "auto" builds the coarse space at setup when the median row's |row sum| / diagonal is at
# most COARSE_EAGER_DOMINANCE and Q is nonsingular, else probes at the first solve
COARSE_EAGER_DOMINANCE = 0.01


def _barely_dominant(sums, diag):
    """Whether the median row of Q (row ``sums``) has ``|row sum| <= COARSE_EAGER_DOMINANCE
    * diagonal`` (a Laplacian, a Dirichlet block of one, a small ridge: Jacobi's slow modes
    remain)."""
    ratio = np.abs(sums) / np.where(diag > 0, diag, np.inf)
    return bool(np.median(ratio) <= COARSE_EAGER_DOMINANCE)


def coarse_checkpoint(r):
    """Jacobi iterations of an r-column panel that cost what the coarse space's setup
    does: ``COARSE_SETUP_PRODUCTS`` single-column products over ``1 + r / BLOCK_SHARE``
    per block iteration (module docstring)."""
    return max(COARSE_MIN_CHECK, int(np.ceil(COARSE_SETUP_PRODUCTS / (1 + r / BLOCK_SHARE))))


class CoarsePricing:
    """The pricing decisions of :class:`~fastgssl.solvers.LaplacianSolver` (a mixin: it
    reads the solver's matrix, preconditioner and order, and calls its ``_build_coarse``).
    """

    def _price_coarse(self, history, coefficients, r):
        """At step k of a solve with the coarse space pending (this module's docstring);
        True: restart with it.

        With theta the smallest Ritz value of ``D^-1 Q`` (the median over the active
        columns), called clustered below ``COARSE_PROBE_RITZ``: at the probe (k =
        ``COARSE_PROBE_ITERATIONS``, an r-column panel), build when it is clustered or when
        the steps the coarse space would save cost more than its setup,
        ``R (1 - COARSE_STEP_COST sqrt(theta / COARSE_RITZ_AFTER)) > coarse_checkpoint(r)``,
        where R, the steps still to go, is the larger of the worst column's residual at its
        rate so far and CG's bound ``sqrt(2 / theta) / 2 log(2 res / rtol)``; later
        (k = 16, 32, ...), when both it is clustered and the rate of the last k / 2 steps
        leaves more than ``T = max(coarse_checkpoint(r), COARSE_MIN_REMAINING)``. (Without
        Ritz values, the probe builds when the rate leaves more than T.)"""
        if not self._coarse_pending:  # decided (an aggregation refused) earlier in this solve
            return False
        theta = smallest_ritz_values(coefficients)
        theta = theta[np.isfinite(theta)]
        if theta.size:
            self.coarse_probe_ = float(np.median(theta))
        clustered = theta.size > 0 and self.coarse_probe_ < COARSE_PROBE_RITZ
        k = history.size - 1
        probe = k <= COARSE_PROBE_ITERATIONS
        if probe and clustered:
            return self._build_coarse(stacklevel=7)
        if not (probe or clustered):
            return False
        if probe:  # the best residual of the second half, at its own step
            j = k // 2 + int(np.argmin(history[k // 2:]))
            late = max(history[j], 1e-300)
            rate = (late / max(history[0], 1e-300)) ** (1.0 / j)
        else:  # the last k / 2 steps: the best residuals of two windows k / 2 apart
            j, late = k, max(history[3 * k // 4:].min(), 1e-300)
            rate = (late / max(history[k // 4:k // 2 + 1].min(), 1e-300)) ** (2.0 / k)
        remaining = np.inf if rate >= 1.0 else np.log(self.rtol / late) / np.log(rate) - (k - j)
        if probe and theta.size:  # (not clustered) what the coarse space would save
            # CG's bound for condition number 2 / theta (D^-1 Q's spectrum lies in (0, 2]),
            # against the rate's extrapolation: the larger of the two
            bound = 0.5 * np.sqrt(2.0 / self.coarse_probe_) * np.log(2.0 * late / self.rtol)
            remaining = max(remaining, bound)
            share = np.sqrt(min(1.0, self.coarse_probe_ / COARSE_RITZ_AFTER))  # of the steps
            saved = remaining * (1.0 - COARSE_STEP_COST * share)
            return saved > coarse_checkpoint(r) and self._build_coarse(stacklevel=7)
        if remaining <= max(coarse_checkpoint(r), COARSE_MIN_REMAINING):
            return False
        return self._build_coarse(stacklevel=7)
