"""``fastgssl warmup``: compile the Numba kernels of the main paths ahead of time."""

from __future__ import annotations

import time

__all__ = ["warmup"]


def warmup(verbose=True):
    """Compile (or load from Numba's disk cache) the kernels of the main paths: the exact
    and inverted-file kNN graphs, the Laplacian solvers, the propagation learners, the
    kernel machines and their exact CV, on small synthetic data. Returns ``{path:
    seconds}``."""
    import warnings

    import numpy as np

    from fastgssl import cv, graphs, models

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = (X[:, 0] > 0).astype(int)
    y_ssl = np.full(600, -1)
    y_ssl[:20] = y[:20]
    steps = [
        ("kNN graph", lambda: graphs.knn_graph(X, 10)),
        ("label propagation", lambda: models.LabelPropagation().fit(X, y_ssl)),
        ("local and global consistency",
         lambda: models.LocalGlobalConsistency().fit(X, y_ssl)),
        ("Poisson learning + exact CV",
         lambda: cv.cv_result(models.PoissonLearning(), X, y_ssl, 2, random_state=0)),
        ("PoissonMBO", lambda: models.PoissonMBO(n_mbo_iter=2).fit(X, y_ssl)),
        ("LapSVM + exact CV",
         lambda: cv.cv_result(models.LapSVM(), X, y_ssl, 2, random_state=0)),
        ("LapRLS", lambda: models.LapRLS().fit(X, y_ssl)),
        ("SVM + exact CV", lambda: cv.cv_result(models.SVM(), X, y, 2, random_state=0)),
        ("KRR", lambda: models.KRR().fit(X, y)),
    ]
    from fastgssl import _jit

    # the user asked for the compilation: the first-compilation notice (which names this
    # command) would only repeat it
    _jit._notice["said"] = True
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, step in steps:
            t0 = time.perf_counter()
            step()
            out[name] = time.perf_counter() - t0
            if verbose:
                print(f"{name:32s} {out[name]:7.2f} s", flush=True)
    return out
