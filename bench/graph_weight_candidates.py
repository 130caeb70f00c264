"""Candidate graphs for the issue-36 default-weight question, on the library's weights.

``bench/bench_graph_weight.py`` builds every graph of ``--weights`` through
:func:`fastgssl.graphs.knn_graph`; a name this module recognizes instead (options in brackets
or a symmetrization the library does not have) is built here, on the same exact 10-NN lists,
with the library's weights (``self_tuned_weights(..., constant=C)``, the formula of
``knn_graph(..., self_tuned_constant=C)``):

``weight[c=C,rank=R](how)``

- ``weight``: ``self_tuned`` (``exp(-C d_ij^2 / s_i)``) or ``self_tuned_sym``
  (``exp(-C d_ij^2 / sqrt(s_i s_j))``), with ``s_i = d_R(x_i)^2``;
- ``c``: the constant, graphlearning's 4 by default; ``c=1`` gives nearly uniform weights
  along one list (``d_1 / d_k`` near 1), larger ``c`` sharper ones. ``self_tuned[c=3](max)``
  is now the propagation learners' default graph (``self_tuned_constant=3.0``,
  ``graph_symmetrize="max"``). Until issue 36's fourth round the constant was applied here
  as ``exp(-4 r)^(C / 4)``; that graph equals the library's ``exp(-C r)`` to 1.1e-16 (same
  edges; MNIST) and the low-label benchmark's accuracies on the default graph equal the
  third round's ``self_tuned[c=3](max)`` cells draw for draw (make_classification goal
  case, nine learners, ten draws);
- ``rank``: the neighbour whose squared distance is the scale, ``k`` by default (``d_k``),
  or ``median`` (the median of the k squared distances);
- ``how``: ``max`` / ``mean`` / ``mutual`` (the library's); ``mix<L>``: ``L max(A, A^T) +
  (1 - L) (A + A^T) / 2`` (a one-sided edge keeps ``(1 + L) / 2`` of its weight);
  ``pow<p>``: the power mean ``((a^p + b^p) / 2)^(1/p)`` (``2^(-1/p)`` of a one-sided edge);
  ``fuzzy``: UMAP's fuzzy union ``a + b - a b``; ``full_mean``: the mean of both directions'
  kernels on the union of the edges, the reverse one evaluated rather than taken as 0
  (``(exp(-C d^2 / s_i) + exp(-C d^2 / s_j)) / 2``: a one-sided edge ``i -> j`` has
  ``d_ij > d_k(x_j)``, so its second term is below ``e^-C``).

Example: ``self_tuned[c=3](max)``, ``self_tuned[rank=median]``, ``self_tuned(full_mean)``.
"""

from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp

SPEC = re.compile(r"^(?P<weight>self_tuned(?:_sym)?)(?:\[(?P<opts>[^\]]*)\])?"
                  r"(?:\((?P<how>[^)]*)\))?$")
LIBRARY_JOINS = ("max", "mean", "mutual")


def is_candidate(name):
    """Whether ``name`` is built here (options, or a join the library does not have)."""
    m = SPEC.match(name)
    return bool(m) and (m["opts"] is not None or (m["how"] or "max") not in LIBRARY_JOINS)


def build(X, name, k):
    """The candidate graph ``name`` (see the module docstring) on the exact k-NN lists of X."""
    from fastgssl.graphs._knn import knn_search
    from fastgssl.graphs._weights import (
        default_symmetrize,
        self_tuned_scale,
        self_tuned_weights,
        symmetrize,
    )

    m = SPEC.match(name)
    if not m:
        raise ValueError(f"not a candidate graph: {name!r}")
    opts = dict(o.split("=") for o in m["opts"].split(",")) if m["opts"] else {}
    unknown = set(opts) - {"c", "rank"}
    if unknown:
        raise ValueError(f"{name!r}: unknown options {sorted(unknown)} (c, rank)")
    c = float(opts.get("c", 4.0))
    idx, sq = knn_search(X, k)
    rank = opts.get("rank", str(k))
    s = np.median(sq, axis=1) if rank == "median" else sq[:, int(rank) - 1]
    sym = m["weight"] == "self_tuned_sym"
    w = self_tuned_weights(sq, self_tuned_scale(s, s[idx] if sym else None), constant=c)
    n = idx.shape[0]
    indptr = np.arange(0, n * k + 1, k)
    A = sp.csr_matrix((w.ravel(), idx.ravel(), indptr), shape=(n, n))
    how = m["how"] or default_symmetrize(m["weight"])
    if how in LIBRARY_JOINS:
        return symmetrize(A, how)
    if how.startswith("mix"):
        lam = float(how[3:])
        return symmetrize(lam * A.maximum(A.T) + (1.0 - lam) * (A + A.T) * 0.5, "max")
    if how.startswith("pow"):
        p = float(how[3:])
        Ap = A.power(p)
        return symmetrize(((Ap + Ap.T) * 0.5).power(1.0 / p), "max")
    if how == "fuzzy":
        return symmetrize(A + A.T - A.multiply(A.T), "max")
    if how == "full_mean" and not sym:
        # squared lengths of the union's edges (+1 keeps duplicates' zero lengths stored)
        D = sp.csr_matrix((sq.ravel() + 1.0, idx.ravel(), indptr), shape=(n, n))
        U = D.maximum(D.T).tocoo()
        d2 = U.data - 1.0
        both = 0.5 * (self_tuned_weights(d2, s[U.row], constant=c)
                      + self_tuned_weights(d2, s[U.col], constant=c))
        return symmetrize(sp.csr_matrix((both, (U.row, U.col)), shape=(n, n)), "max")
    raise ValueError(f"{name!r}: unknown symmetrization {how!r}")
