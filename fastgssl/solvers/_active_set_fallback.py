"""The fallbacks of the active-set box QP (:mod:`fastgssl.solvers._active_set`) when its
outer loop stops unconverged: Chapelle's (2007) primal partition iteration with an exact line
search (unweighted), damped Newton on the weighted objective (with sample weights); and the
box QP's constants, which both read.

Reference: O. Chapelle, "Training a support vector machine in the primal", Neural
Computation 19(5), 2007.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dpotrf as _dpotrf
from scipy.linalg.lapack import dpotrs as _dpotrs

from fastgssl.solvers._newton import _DenseProblem, _line_search, _newton, _WeightedLoss

__all__ = []


def _box_qp_constants(kind, h, gamma_a, l):
    """``(c, b, U)`` of the box QP in ``a = y * alpha``
    (:func:`fastgssl.solvers._active_set._box_qp_column`)."""
    gl = gamma_a * l
    if kind == "huber_hinge":
        return 4.0 * h * gl, 1.0 + h, 1.0 / (2.0 * gl)
    return gl, 1.0, np.inf


_NOT_PSD = (
    "the kernel matrix is not positive semi-definite: the Cholesky factorization of "
    "K_MM + c I failed in the active-set solver (a Gram matrix of a positive-definite kernel "
    "is needed; add a small ridge to K, raise gamma_a, or use solver='newton')."
)

def _pieces(z, kind, h):
    """Piece of each point from its margin z = y f: 0 rest, 1 quadratic piece, 2 linear."""
    if kind == "squared_hinge":
        return (z < 1.0).astype(np.int8)
    code = np.zeros(z.shape[0], dtype=np.int8)
    code[z <= 1.0 + h] = 1
    code[z < 1.0 - h] = 2
    return code


def _partition_newton(K, y, kind, h, gamma_a, alpha, f, loss, tol, max_iter, info):
    """Chapelle's primal partition iteration with an exact line search (the fallback).

    On the partition of the current ``f`` into M, E and the rest, the minimizer of the
    objective's quadratic model is ``alpha = 0`` off M u E, ``alpha_E = y_E / (2 gamma_a
    l)``, ``(K_MM + c I) alpha_M = b y_M - K_ME alpha_E``; the step towards it is the Newton
    step, taken with the exact line search of the true objective (plain partition iteration
    can cycle). Stops when a full step leaves the partition unchanged or the relative step is
    below ``tol``.
    """
    l = y.shape[0]
    c, b, _ = _box_qp_constants(kind, h, gamma_a, l)
    aE = 1.0 / (2.0 * gamma_a * l)
    code = _pieces(y * f, kind, h)
    for _ in range(max_iter):
        M = np.flatnonzero(code == 1)
        E = np.flatnonzero(code == 2)
        alpha_new = np.zeros(l)
        alpha_new[E] = y[E] * aE
        f_new = (y[E] * aE) @ K[E] if E.size else np.zeros(l)
        if M.size:
            K_M = K[M]
            H = K_M[:, M]
            H.flat[:: M.size + 1] += c
            R, err = _dpotrf(H, lower=0, overwrite_a=1, clean=0)
            if err != 0:
                raise ValueError(_NOT_PSD)
            alpha_new[M], _ = _dpotrs(R, b * y[M] - f_new[M], lower=0)
            f_new += alpha_new[M] @ K_M
        d = alpha_new - alpha
        u = f_new - f
        slope = (loss.d1(y, f) @ u) / l + 2.0 * gamma_a * (f @ d)
        scale = np.abs(alpha_new).max()
        step = np.abs(d).max() / scale if scale > 0 else 0.0
        info.update(n_iter=info["n_iter"] + 1, step=step, slope=slope, margin=int(M.size),
                    linear=int(E.size))
        if not slope < 0:  # no descent left: stationary to round-off
            info["converged"] = True
            break
        t = _line_search(loss, y, f, u, l, gamma_a, 0.0, (alpha @ f, f @ d, d @ u),
                         (0.0, 0.0, 0.0), slope)
        info["t"] = t
        alpha, f = (alpha_new, f_new) if t == 1.0 else (alpha + t * d, f + t * u)
        new_code = _pieces(y * f, kind, h)
        if (t == 1.0 and np.array_equal(new_code, code)) or step * t <= tol:
            info["converged"] = True
            break
        code = new_code
    return alpha, f


def _weighted_newton_fallback(K, y, loss, weights, gamma_a, alpha, tol, max_iter, info):
    """Damped Newton on the weighted problem from ``alpha`` (the active-set fallback)."""
    problem = _DenseProblem(K, np.ones(K.shape[0], dtype=bool), None, gamma_a, 0.0)
    alpha, newton_info = _newton(problem, _WeightedLoss(loss, weights), y, gamma_a, 0.0,
                                 alpha.copy(), tol, max_iter)
    info.update(n_iter=info["n_iter"] + newton_info["n_iter"], step=newton_info["step"],
                t=newton_info["t"], slope=newton_info["slope"],
                converged=newton_info["converged"])
    return alpha, K @ alpha
