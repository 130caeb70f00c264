"""The models of ``fastgssl select``: the ``--model`` table, their grids and estimators,
and the plan of the dense route that ``--backend`` refuses or replaces before the search."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from fastgssl import _memory, kernels, models

_TASKS = ("classification", "regression")


class _Model(NamedTuple):
    """A ``--model`` choice: the tasks it takes, whether it learns from unlabeled points
    (the job then hides labels and adds the baselines), whether its loss is the square
    loss (``--method exact-quadratic``), its grid and its estimator."""

    tasks: tuple
    semi_supervised: bool
    square_loss: bool
    grid: str
    build: Callable


_MODELS = {
    "krr": _Model(_TASKS, False, True, "kernel_machine",
                  lambda task, seed: models.KRR(task=task, random_state=seed)),
    "svm": _Model(("classification",), False, False, "kernel_machine",
                  lambda task, seed: models.SVM(random_state=seed)),
    "laprls": _Model(_TASKS, True, True, "manifold",
                     lambda task, seed: models.LapRLS(task=task,
                                                                  random_state=seed)),
    "lapsvm": _Model(("classification",), True, False, "manifold",
                     lambda task, seed: models.LapSVM(random_state=seed)),
    # graph propagation (exact CV from one block solve; PoissonMBO, VolumeMBO and the
    # reweighted Laplace learners refitted per fold)
    "poisson": _Model(("classification",), True, False, "propagation",
                      lambda task, seed: models.PoissonLearning()),
    "poissonmbo": _Model(("classification",), True, False, "propagation",
                         lambda task, seed: models.PoissonMBO()),
    "volumembo": _Model(("classification",), True, False, "propagation",
                        lambda task, seed: models.VolumeMBO(random_state=seed)),
    "labelprop": _Model(("classification",), True, False, "propagation",
                        lambda task, seed: models.LabelPropagation()),
    "pwll": _Model(("classification",), True, False, "propagation",
                   lambda task, seed: models.LabelPropagation(reweighting="poisson")),
    "lgc": _Model(("classification",), True, False, "propagation",
                  lambda task, seed: models.LocalGlobalConsistency()),
}
_DEFAULT_MODEL = {"classification": "lapsvm", "regression": "laprls"}
_METHODS = ("auto", "fbif", "fbif-margin", "bif", "exact", "exact-quadratic", "newton")
_BACKENDS = ("auto", "dense", "nystrom")

# The dense route of a kernel model (an n x n kernel matrix and, for laprls / lapsvm, the
# n x n system of the deformed kernel per ratio gamma_i / (n^2 gamma_a)) is estimated before
# the search starts (_dense_plan): its memory, and a lower bound of its factorization work
# at _DENSE_FLOPS_PER_SECOND (one BLAS thread of the 2-core project machine, at load 4, ran
# a 21,669 x 21,669 LU in 246 s, 28 GFlop/s: bench/repro_openblas_getrf.py; the constant
# leaves room for a busier machine). --backend auto takes the
# Nystrom backend when the dense route would not fit or would take longer than
# _DENSE_AUTO_SECONDS; --backend dense is refused when it would not fit or would take longer
# than _DENSE_MAX_SECONDS.
_DENSE_FLOPS_PER_SECOND = 2e10
_DENSE_AUTO_SECONDS = 120.0
_DENSE_MAX_SECONDS = 1800.0


def _grid(model, X, quick):
    """Seed 001 / 000 style grids, sigma scaled to the data's median squared distance s0.

    Widths far below s0 make K nearly the identity: every held-out prediction is then
    decided by round-off-sized kernel values and no first-order approximation of CV can
    rank them, so the default grid starts at s0 / 8.
    """
    s0 = float(kernels.default_sigma(X))
    if _MODELS[model].grid == "propagation":
        # no kernel width: the graph's k (one kNN search at the largest k serves all) and,
        # for the Laplace-type solutions, class mass normalization
        grid = {"n_neighbors": [5, 10, 20] if quick else [5, 10, 15, 20, 30]}
        if model in ("labelprop", "lgc"):
            grid["class_mass_normalization"] = [False, True]
        return grid
    if _MODELS[model].grid == "kernel_machine":
        sig_exp = [-2, 0, 2] if quick else [-3, -2, -1, 0, 1, 2, 3, 4]
        lam_exp = [-15, -9, -3] if quick else [-15, -12, -9, -6, -3, 0]
        return {"sigma": [s0 * 2.0**i for i in sig_exp], "lam": [2.0**i for i in lam_exp]}
    sig_exp = [-2, 0, 2] if quick else [-4, -2, 0, 2, 4]
    ga = [1e-6, 1e-4, 1e-2] if quick else [1e-6, 1e-4, 1e-2, 1.0]
    gi = [1e-4, 1e-2, 1.0] if quick else [1e-6, 1e-4, 1e-2, 1.0]
    return {"sigma": [s0 * 2.0**i for i in sig_exp], "gamma_a": ga, "gamma_i": gi}


def _names(pred):
    return " / ".join(m for m, spec in _MODELS.items() if pred(spec))


def _check_options(model, method, labeled_fraction, labels_per_class, n_components):
    """Refuse, in the command line's words, option values that cannot apply to ``model``:
    a CV criterion it has no derivatives for, the label-hiding options of a supervised
    model, Nystrom columns of a model without a kernel."""
    spec = _MODELS[model]
    graph = spec.grid == "propagation"
    if graph and method not in (None, "auto", "exact"):
        raise ValueError(
            f"--method {method} applies to the kernel models "
            f"({_names(lambda sp: sp.grid != 'propagation')}); --model {model} is graph "
            f"propagation, scored by exact CV (one block solve; refits for poissonmbo, "
            f"volumembo and pwll): use --method exact, or leave --method out (auto).")
    if method == "exact-quadratic" and not spec.square_loss:
        raise ValueError(f"--method exact-quadratic needs the square loss: use --model "
                         f"{_names(lambda sp: sp.square_loss).replace(' / ', ' or ')}.")
    if not spec.semi_supervised:
        given = [flag for flag, value in (("--labeled-fraction", labeled_fraction),
                                          ("--labels-per-class", labels_per_class))
                 if value is not None]
        if given:
            flags = " and ".join(given)
            raise ValueError(
                f"{flags} appl{'ies' if len(given) == 1 else 'y'} to the semi-supervised "
                f"models ({_names(lambda sp: sp.semi_supervised)}); --model {model} is "
                f"supervised and trains on every training label: drop {flags}.")
    if graph and n_components is not None:
        raise ValueError(f"--n-components sets Nystrom columns of the kernel models "
                         f"({_names(lambda sp: sp.grid != 'propagation')}); --model {model} "
                         f"works on the graph alone, drop --n-components.")


def _estimator(model, task, random_state):
    spec = _MODELS[model]
    if task not in spec.tasks:
        others = [m for m, sp in _MODELS.items() if task in sp.tasks]
        raise ValueError(f"--model {model} needs a classification dataset, and this one is "
                         f"taken for {task}; use --model {' / '.join(others)} (or --task "
                         f"classification if the labels are classes).")
    return spec.build(task, random_state)


def _dense_plan(model, n, grid):
    """What the dense route of ``model``'s search on ``n`` training points costs at least:
    ``{"bytes", "flops", "seconds", "work"}``.

    Memory: the n x n arrays alive at once (the kernel matrix and its factorization; the
    deformed kernel's system too with a graph), as the search checks it. Work, per kernel
    width: for laprls / lapsvm one n x n LU (2 n^3 / 3 flops) per distinct ratio
    gamma_i / (n^2 gamma_a), or the two eigendecompositions of the spectral route, at least
    as much as four LUs; for krr one eigendecomposition (at least 4 n^3 / 3); for svm only the
    kernel (its refits are not bounded here). A lower bound: what it refuses would not finish
    sooner.
    """
    spec = _MODELS[model]
    widths = len(grid.get("sigma", [None]))
    n = float(n)
    if spec.grid == "manifold":
        ratios = {gi / (n * n * ga) for ga in grid["gamma_a"] for gi in grid["gamma_i"]
                  if gi > 0}
        lus = min(len(ratios), 4)
        per_width, n_arrays = lus * 2.0 * n**3 / 3.0, 3
        work = f"{widths * lus} LU factorization(s) of {int(n):,} x {int(n):,} systems"
    elif spec.square_loss:
        per_width, n_arrays = 4.0 * n**3 / 3.0, 2
        work = f"{widths} eigendecomposition(s) of {int(n):,} x {int(n):,} kernel matrices"
    else:
        per_width, n_arrays = 0.0, 2
        work = f"{widths} {int(n):,} x {int(n):,} kernel matrices (refits not counted)"
    flops = widths * per_width
    return {"bytes": int(n_arrays * 8 * n * n), "flops": flops,
            "seconds": flops / _DENSE_FLOPS_PER_SECOND, "work": work}


def _choose_backend(backend, model, n, grid, quick=True):
    """``(backend, note)``: the backend of a kernel model's search (see ``--backend``).

    Raises ValueError for ``--backend dense`` when the dense route would not fit in the
    memory available or would take longer than ``_DENSE_MAX_SECONDS``, naming the size, the
    estimate and the options that work.
    """
    if _MODELS[model].grid == "propagation":
        if backend != "auto":
            raise ValueError(f"--backend applies to the kernel models (krr, svm, laprls, "
                             f"lapsvm); --model {model} works on the graph alone, drop "
                             f"--backend.")
        return None, None
    if backend == "nystrom":
        return backend, None
    plan = _dense_plan(model, n, grid)
    available, source = _memory.available_memory()
    fits = available is None or plan["bytes"] <= available
    minutes = plan["seconds"] / 60.0
    fmt = _memory.format_bytes
    estimate = (f"about {fmt(plan['bytes'])} of n x n arrays"
                + (f" (available: {fmt(available)}, {source})" if available else "")
                + f" and {plan['work']}, at least {minutes:.0f} min at "
                f"{_DENSE_FLOPS_PER_SECOND / 1e9:.0f} GFlop/s")
    if backend == "dense":
        if fits and plan["seconds"] <= _DENSE_MAX_SECONDS:
            return backend, None
        why = "would not fit in memory" if not fits else (
            f"would take more than {_DENSE_MAX_SECONDS / 60:.0f} min")
        raise ValueError(
            f"--backend dense on {n:,} training points {why}: {estimate}. Use --backend "
            f"nystrom (n x c features, never n x n; --n-components sets c, default 300), "
            f"or {'a smaller data set' if quick else 'a smaller grid (--quick) or data set'}.")
    if fits and plan["seconds"] <= _DENSE_AUTO_SECONDS:
        return "dense", None
    return "nystrom", (f"backend nystrom: the dense route on {n:,} training points needs "
                       f"{estimate}; --backend dense forces it")
