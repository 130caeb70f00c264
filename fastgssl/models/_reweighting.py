"""Reweighting of the graph near the labeled points, for Laplace learning at low label rates.

Each scheme returns a diagonal rescaling of the weight matrix that depends on which points
are labeled; Laplace learning (the harmonic solution, or the SS(lambda) criterion) is then
solved on the reweighted graph (:class:`fastgssl.models.LabelPropagation`,
``reweighting=``). The three schemes are those of graphlearning's
``graph.reweight`` (v1.7.5), on the same W they give the same matrix:

- ``"wnll"``, the weighted nonlocal Laplacian (Shi, Osher & Zhu 2017):
  W' = A W + W A with A = diag(a), a_i = n / m on the m labeled points and 1 elsewhere;
- ``"properly"``, the properly weighted Laplacian (Calder & Slepcev 2020):
  W' = G W + W G with G = diag(gamma), gamma_i = 1 + (r / max(dist_i, r_zeta))^alpha,
  dist_i the Euclidean distance from x_i to the nearest labeled point and
  r_zeta = r / (zeta - 1)^(1 / alpha) (gamma is then at most zeta);
- ``"poisson"``, Poisson-reweighted Laplace learning (Calder, Slepcev & Thorpe 2023):
  W' = diag(w) W diag(w), with L w = 1_S - m / n (L = D - W, 1_S the indicator of the
  labeled points), shifted so that min w = 1e-5.

On a graph with several connected components the Poisson weights are computed per component
holding a label (the mean of 1_S and the minimum taken on the component), which on a
connected graph is graphlearning's definition and on a disconnected one keeps each
component's weights what they would be on that component alone.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from fastgssl._components import labeled_components
from fastgssl._sparse_blocks import diagonal_scaled, principal_submatrix
from fastgssl.graphs import knn_search
from fastgssl.regularizers import laplacian
from fastgssl.solvers import reused_solver

__all__ = ["PROPERLY_DEFAULTS", "REWEIGHTINGS", "check_reweighting", "node_weights",
           "reweighted_graph"]

REWEIGHTINGS = ("wnll", "properly", "poisson")

# numpydoc entries joined into LabelPropagation's docstring
REWEIGHTING_PARAMS = """\
    reweighting : {"wnll", "properly", "poisson"} or None, default=None
        Reweight the graph near the labeled points before solving (Laplace learning at low
        label rates, as graphlearning's ``laplace(reweighting=...)``): ``"wnll"`` the
        weighted nonlocal Laplacian (Shi, Osher & Zhu 2017), ``"properly"`` the properly
        weighted Laplacian (Calder & Slepcev 2020; needs the features: a ValueError with
        ``graph="precomputed"``, pass ``graph=W`` with ``X`` instead), ``"poisson"``
        Poisson-reweighted Laplace learning (Calder, Slepcev & Thorpe 2023). The weights
        depend on which points are labeled, so exact CV refits per fold.
    reweighting_params : dict or None, default=None
        For ``"properly"``: ``{"radius": r, "alpha": alpha, "zeta": zeta}`` (defaults 0.1, 2,
        1e7, graphlearning's; r is a distance in the units of ``X``).
"""

REWEIGHTING_NOTES = """\
    Reweighting (``reweighting=``) replaces W by a diagonal rescaling that depends on the
    labeled set S (``m = |S|`` of n points): ``"wnll"`` W' = A W + W A, a_i = n / m on S and 1
    elsewhere; ``"properly"`` W' = G W + W G, gamma_i = 1 + (r / max(dist(x_i, X_S),
    r_zeta))^alpha, r_zeta = r / (zeta - 1)^(1 / alpha); ``"poisson"`` W' = diag(w) W
    diag(w) with L w = 1_S - m / n, shifted to min w = 1e-5 (per labeled component). The
    system on W' is solved with a symmetric diagonal scaling (its weights reach n / m or
    1e7). ``reweighting_weights_`` holds a, gamma or w.

    Exact cross-validation refits each fold for all three reweightings. For WNLL a low-rank
    update exists but is not cheap: hiding a fold changes m, hence a_i = n / m at every
    remaining labeled point and so the diagonal of every unlabeled neighbour of S, an update
    of rank about k l (k neighbours, l labels), more than the t refits cost; the other two
    change every weight.
"""

# the learner's parameter constraints (scikit-learn's declarative validation)
REWEIGHTING_CONSTRAINTS = {
    "reweighting": [StrOptions(set(REWEIGHTINGS)), None],
    "reweighting_params": [dict, None],
}

# graphlearning's defaults of graph.reweight (its laplace class accepts alpha, zeta and r but
# does not pass them on, so these are what gl.ssl.laplace(reweighting="properly") uses)
PROPERLY_DEFAULTS = {"alpha": 2.0, "zeta": 1e7, "radius": 0.1}
# |log r_zeta| allowed (double precision spans e^-708 .. e^709)
_LOG_CAP_LIMIT = 700.0

# the floor added after the minimum is subtracted from the Poisson weights (graphlearning's)
POISSON_FLOOR = 1e-5


def check_reweighting(kind, params, precomputed):
    """The checks of ``reweighting`` (``kind``) / ``reweighting_params`` (``params``) that
    involve other parameters: ``"properly"`` needs the features (not ``graph="precomputed"``:
    ``precomputed``), and only it takes ``reweighting_params`` (keys ``alpha`` > 0, ``zeta``
    > 1, ``radius`` > 0)."""
    if kind == "properly" and precomputed:
        raise ValueError(
            "reweighting='properly' weights each point by its Euclidean distance to the "
            "nearest labeled point, but graph='precomputed' gives no features (X is the "
            "affinity matrix); pass the affinity as graph=W together with the features X, or "
            "use reweighting='wnll' or 'poisson', which need only the graph."
        )
    if params is None:
        return
    if kind != "properly":
        raise ValueError(
            f"reweighting_params applies to reweighting='properly' (keys "
            f"{sorted(PROPERLY_DEFAULTS)}); got reweighting={kind!r}, which takes none."
        )
    unknown = sorted(set(params) - set(PROPERLY_DEFAULTS))
    if unknown:
        raise ValueError(
            f"reweighting_params has unknown keys {unknown}; reweighting='properly' takes "
            f"{sorted(PROPERLY_DEFAULTS)}."
        )
    for key, low in (("alpha", 0.0), ("zeta", 1.0), ("radius", 0.0)):
        if key in params:
            value = params[key]
            if not (isinstance(value, (int, float, np.floating, np.integer))
                    and np.isfinite(value) and value > low):
                raise ValueError(
                    f"reweighting_params[{key!r}] must be a finite number > {low:g}, got "
                    f"{value!r}."
                )
    # the cap r_zeta = r / (zeta - 1)^(1 / alpha) must be a positive finite float: a tiny
    # alpha overflows the power (a bare OverflowError) or sends r_zeta to 0 (infinite gamma
    # at the labels)
    p = {**PROPERLY_DEFAULTS, **params}
    alpha, zeta, radius = float(p["alpha"]), float(p["zeta"]), float(p["radius"])
    log_cap = np.log(radius) - np.log(zeta - 1.0) / alpha
    if not abs(log_cap) <= _LOG_CAP_LIMIT:
        fix = "raise alpha"
        if zeta > 2.0 and _LOG_CAP_LIMIT + np.log(radius) > 0:
            least = np.log(zeta - 1.0) / (_LOG_CAP_LIMIT + np.log(radius))
            fix += f" to at least {least:.3g} (for this zeta and radius)"
        raise ValueError(
            f"reweighting_params alpha={alpha:g} with zeta={zeta:g} and radius={radius:g} put "
            f"the distance cap r_zeta = radius / (zeta - 1)^(1 / alpha) at about "
            f"10^({log_cap / np.log(10):.4g}), outside double precision; {fix}, or bring zeta "
            f"towards 2."
        )


def wnll_weights(n, labeled_idx):
    """a_i = n / m on the m labeled points, 1 elsewhere (Shi, Osher & Zhu 2017)."""
    a = np.ones(n)
    if labeled_idx.size:
        a[labeled_idx] = n / labeled_idx.size
    return a


def properly_weights(X, labeled_idx, *, alpha=2.0, zeta=1e7, radius=0.1, n_jobs=None):
    """gamma_i = 1 + (r / max(dist_i, r_zeta))^alpha (Calder & Slepcev 2020).

    ``dist_i`` is the Euclidean distance from row i of ``X`` to the nearest labeled row (an
    exact search, as graphlearning's kd-tree query)."""
    _, d2 = knn_search(X, 1, X_ref=X[labeled_idx], n_jobs=n_jobs)
    dist = np.sqrt(np.maximum(np.asarray(d2[:, 0], dtype=np.float64), 0.0))
    r_zeta = radius / (zeta - 1.0) ** (1.0 / alpha)
    dist = np.maximum(dist, r_zeta)
    return 1.0 + (radius / dist) ** alpha


def poisson_weights(W, labeled_idx, solver="auto", rtol=1e-6):
    """w with L w = 1_S - mean(1_S), shifted to min w = 1e-5, per labeled component.

    Returns ``(w, info)``; rows of components without a label get weight 1 (their values
    follow the learner's unlabeled policy whatever the weights)."""
    n = W.shape[0]
    w = np.ones(n)
    comp, has_label = labeled_components(W, labeled_idx)
    idx = np.flatnonzero(has_label[comp])
    f = np.zeros(n)
    f[labeled_idx] = 1.0
    # the source's mean per component, so that each right-hand side is in the range of L
    sizes = np.bincount(comp, minlength=comp.max() + 1).astype(np.float64)
    f -= (np.bincount(comp, weights=f, minlength=sizes.size) / sizes)[comp]
    L = sp.csr_matrix(laplacian(W, kind="L", validate=False))
    if idx.size < n:
        L = principal_submatrix(L, idx)
    sol, info = reused_solver(L, solver=solver, rtol=rtol, null_space="auto",
                              check_input=False).solve(
        f[idx][:, None])
    v = np.asarray(sol, dtype=np.float64).reshape(idx.size)
    c = comp[idx]
    low = np.full(comp.max() + 1, np.inf)
    np.minimum.at(low, c, v)
    w[idx] = v - low[c] + POISSON_FLOOR
    return w, info


def node_weights(kind, W, labeled, coords=None, params=None, solver="auto", rtol=1e-6,
                 n_jobs=None):
    """The per-node factors of reweighting ``kind`` for the labeled mask ``labeled``.

    Returns ``(weights, info)`` (``info``: the Poisson solve's, else None)."""
    lab = np.flatnonzero(labeled)
    if kind == "wnll":
        return wnll_weights(W.shape[0], lab), None
    if kind == "properly":
        p = {**PROPERLY_DEFAULTS, **(params or {})}
        return properly_weights(coords, lab, alpha=p["alpha"], zeta=p["zeta"],
                                radius=p["radius"], n_jobs=n_jobs), None
    return poisson_weights(W, lab, solver=solver, rtol=rtol)


def reweighted_graph(kind, W, weights):
    """W' = A W + W A (``"wnll"``, ``"properly"``) or A W A (``"poisson"``), A = diag: one
    pass on W's pattern, scipy's products' entries bit for bit
    (:func:`fastgssl._sparse_blocks.diagonal_scaled`)."""
    return diagonal_scaled(W, weights, sum_of_sides=kind != "poisson")
