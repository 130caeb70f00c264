"""The typed parts a CV method reads of a learner's :class:`fastgssl.CVObjective` or
:class:`fastgssl.CVState`, and the capabilities they declare.

A learner declares its kernel (:class:`fastgssl.KernelPart`), graph
(:class:`fastgssl.GraphPart`) and fold refits (:class:`fastgssl.RefitPart`) whole, or not at
all. The CV methods and the grid search read the parts through :func:`kernel_of`,
:func:`graph_of` and :func:`refit_of` (the empty part when none is declared: every hook
None), never the deprecated flat aliases (``objective.kernel_key`` and the like, kept for
third parties); what the search may share or skip is one named capability below, read off
the parts, not a test scattered over the callers.
"""

from __future__ import annotations

from fastgssl._protocol import GraphPart, KernelPart, RefitPart

__all__ = ["dense_kernel", "graph_of", "kernel_of", "refit_of", "shares_graph",
           "shares_kernel", "solves_one_vs_one", "uses_graph"]

_NO_KERNEL = KernelPart()
_NO_GRAPH = GraphPart()
_NO_REFIT = RefitPart()


def kernel_of(objective):
    """The :class:`fastgssl.KernelPart` of ``objective`` (the empty part when it declares
    none)."""
    part = objective.kernel_part
    return _NO_KERNEL if part is None else part


def graph_of(objective):
    """The :class:`fastgssl.GraphPart` of ``objective`` (the empty part when it declares
    none)."""
    part = objective.graph_part
    return _NO_GRAPH if part is None else part


def refit_of(objective):
    """The :class:`fastgssl.RefitPart` of a :class:`fastgssl.CVObjective` or
    :class:`fastgssl.CVState` (the empty part when it declares none)."""
    part = objective.refit_part
    return _NO_REFIT if part is None else part


def shares_graph(objective):
    """The graph part can be built once and handed to copies of the learner: it declares
    both ``build_graph`` and ``with_graph``."""
    part = graph_of(objective)
    return part.build_graph is not None and part.with_graph is not None


def dense_kernel(objective):
    """The kernel part builds a dense Gram matrix (``build_kernel``; a Nystrom learner
    declares ``build_factor`` instead)."""
    return kernel_of(objective).build_kernel is not None


def solves_one_vs_one(objective):
    """The refit part solves one column per class pair and decodes them (``decode``): only
    exact refits read such columns."""
    return refit_of(objective).decode is not None


def shares_kernel(objective):
    """The kernel part can be built once per key along a grid: it declares a ``key`` and
    ``build_kernel`` or ``build_factor``."""
    part = kernel_of(objective)
    return part.key is not None and (part.build_kernel is not None
                                     or part.build_factor is not None)


def uses_graph(objective):
    """The objective has a graph term the search can share: a kernel machine with
    ``gamma_i > 0`` or a graph-propagation learner (no loss), whose graph part is
    shareable (:func:`shares_graph`)."""
    return shares_graph(objective) and (objective.gamma_i > 0 or objective.loss is None)
