"""Figures for semi-supervised learning and model selection (matplotlib, optional).

- :func:`plot_cv_surface`   the CV criterion of a fitted :class:`~fastgssl.cv.GridSearchCV`
  over two grid parameters: the approximate criterion beside the exact t-fold CV error, the
  selected point marked;
- :func:`plot_graph`        a graph drawn over 2-D coordinates, points coloured by labels
  (``-1`` = unlabeled) or by real-valued scores;
- :func:`plot_label_rate_curve`  accuracy (or any score) against the number or fraction of
  labeled points, one median curve with a min-max band per method.

matplotlib is an optional dependency (``pip install matplotlib``; from a checkout
``pip install -e '.[plot]'``); it is imported inside the functions, so ``import
fastgssl.plotting`` works without it and each function raises an :class:`ImportError`
naming the package when it is missing.  Every function draws on ``ax``
(or ``axes``) when given, returns the matplotlib objects it drew on, and never calls
``plt.show``.
"""

from __future__ import annotations

import numpy as np

from fastgssl._optional import import_optional

__all__ = ["plot_cv_surface", "plot_graph", "plot_label_rate_curve"]

_EXACT_METHODS = ("exact", "exact-quadratic")


def _pyplot():
    return import_optional("matplotlib.pyplot", "fastgssl.plotting", extra="plot")


# ---------------------------------------------------------------------------------------------
# CV surface of a grid search
# ---------------------------------------------------------------------------------------------


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:  # arrays, graphs: compare by identity
        return a is b


def _grid_axes(params, x, y):
    """Distinct values of x and y in grid order (sorted when they are sortable numbers)."""
    out = []
    for name in (x, y):
        values = []
        for p in params:
            if name in p and not any(_same(p[name], v) for v in values):
                values.append(p[name])
        try:
            values = sorted(values)
        except TypeError:
            pass
        out.append(values)
    return out


def _default_xy(params):
    counts = {}
    for p in params:
        for k, v in p.items():
            seen = counts.setdefault(k, [])
            if not any(_same(v, s) for s in seen):
                seen.append(v)
    names = sorted((k for k in counts if len(counts[k]) > 1), key=lambda k: -len(counts[k]))
    if len(names) < 2:
        raise ValueError(
            f"the grid varies {len(names)} parameter(s) ({names}); plot_cv_surface needs two: "
            "pass x= and y= explicitly or search over a two-dimensional grid."
        )
    return names[0], names[1]


def _method_name(search):
    """The method a fitted search ran (``method_`` resolves ``method="auto"``)."""
    method = getattr(search, "method_", getattr(search, "method", "exact"))
    return method if isinstance(method, str) else getattr(method, "name", repr(method))


def _exact_errors(search, exact, params):
    """Exact CV error per candidate of ``search`` (NaN where unknown) and its provenance."""
    res = search.cv_results_
    if exact is None:
        if _method_name(search) in _EXACT_METHODS:
            return (np.asarray(res["mean_cv_error"], dtype=float),
                    f"exact ({_method_name(search)})")
        if "exact_cv_error" in res:
            return (np.asarray(res["exact_cv_error"], dtype=float),
                    "exact t-fold CV (verified points)")
        return np.full(len(params), np.nan), "exact t-fold CV (not computed)"
    other = exact.cv_results_ if hasattr(exact, "cv_results_") else exact
    other_params = list(other["params"])
    other_err = np.asarray(other["mean_cv_error"], dtype=float)
    out = np.full(len(params), np.nan)
    for i, p in enumerate(params):
        for j, q in enumerate(other_params):
            if set(p) == set(q) and all(_same(p[k], q[k]) for k in p):
                out[i] = other_err[j]
                break
    method = _method_name(exact) if hasattr(exact, "cv_results_") else "exact"
    return out, f"exact t-fold CV ({method})"


def _fmt(v):
    return f"{v:g}" if isinstance(v, (int, float, np.integer, np.floating)) else str(v)


def plot_cv_surface(search, x=None, y=None, *, exact=None, axes=None, cmap="viridis",
                    vmax=None, annotate=None, title=None):
    """Approximate and exact CV criteria of a grid search, side by side, over two parameters.

    Parameters
    ----------
    search : GridSearchCV
        A fitted search.  Its approximate criterion is ``cv_results_["approx_cv_error"]``
        when the search ran with ``verify`` (the criterion before exact re-scoring), else
        ``cv_results_["mean_cv_error"]``.
    x, y : str, optional
        The grid parameters on the horizontal and vertical axes (default: the two parameters
        with the most distinct values).  Other parameters are held at their values in
        ``search.best_params_`` (the slice through the selected point).
    exact : GridSearchCV or dict, optional
        A search over the same grid with an exact method (``method="exact"`` or
        ``"exact-quadratic"``), or its ``cv_results_``; its ``mean_cv_error`` fills the right
        panel.  Without it the right panel shows ``cv_results_["exact_cv_error"]`` (the
        candidates that ``verify`` re-scored; the others are grey), or the search's own
        criterion when the search is exact.
    axes : sequence of two matplotlib Axes, optional
        Where to draw (default: a new figure with two panels).
    cmap : str, default="viridis"
        Colour map; both panels share one colour scale (the CV error).
    vmax : float, optional
        Top of the colour scale (default: the largest error shown).  A lower value resolves
        the region of good models; larger errors saturate (the colour bar shows an arrow).
    annotate : bool, optional
        Write the error in every cell (default: when the grid has at most 64 cells).
    title : str, optional
        Figure title (``suptitle``).

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : ndarray of two Axes
        ``axes[0]`` shows the approximate criterion, ``axes[1]`` the exact CV error.  On
        both, the selected candidate (``search.best_index_``) is a red star labelled
        ``"selected"``; when the argmin of the approximate criterion is a different candidate
        on the slice, it is a magenta cross labelled ``"approximate argmin"``.  The x / y axis
        labels are the parameter names and the tick labels their values.

    Notes
    -----
    First-order criteria (t-BIF, t-FBIF) are optimistic for nearly interpolating models:
    small regularization and narrow kernels give held-out points high leverage and the
    criterion falls towards the training error.  The two panels show where that happens on
    a grid and whether the selected point escaped it.
    """
    plt = _pyplot()
    from matplotlib.colors import Normalize

    res = search.cv_results_
    params = list(res["params"])
    if x is None or y is None:
        x, y = _default_xy(params)
    approx = np.asarray(res.get("approx_cv_error", res["mean_cv_error"]), dtype=float)
    exact_err, exact_label = _exact_errors(search, exact, params)
    best = search.best_params_
    others = [k for k in best if k not in (x, y)]
    xs, ys = _grid_axes(params, x, y)
    if not xs or not ys:
        raise ValueError(f"parameters {x!r} and {y!r} must both be in the grid.")
    A = np.full((len(ys), len(xs)), np.nan)
    E = np.full_like(A, np.nan)
    cell = {}
    for i, p in enumerate(params):
        if x not in p or y not in p:
            continue
        if not all(k in p and _same(p[k], best[k]) for k in others):
            continue
        c = next(j for j, v in enumerate(xs) if _same(v, p[x]))
        r = next(j for j, v in enumerate(ys) if _same(v, p[y]))
        A[r, c], E[r, c] = approx[i], exact_err[i]
        cell[i] = (r, c)

    own_figure = axes is None
    if own_figure:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), sharey=True, layout="constrained")
    else:
        fig = axes[0].figure
    axes = np.asarray(axes, dtype=object).ravel()
    finite = np.concatenate([A[np.isfinite(A)], E[np.isfinite(E)]])
    vmin, finite_max = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    extend = "neither"
    if vmax is not None:
        extend = "max" if vmax < finite.max(initial=-np.inf) else "neither"
    else:
        vmax = finite_max
    if vmax <= vmin:
        vmax = vmin + 1e-12
    norm = Normalize(vmin, vmax)
    colormap = plt.get_cmap(cmap).with_extremes(bad="0.85")
    if annotate is None:
        annotate = A.size <= 64
    method = _method_name(search)
    kind = "criterion" if method in _EXACT_METHODS else "approximate criterion"
    titles = (f"{kind} ({method})", exact_label)
    image = None
    for ax, Z, t in zip(axes, (A, E), titles):
        image = ax.imshow(np.ma.masked_invalid(Z), origin="lower", cmap=colormap, norm=norm,
                          aspect="auto", interpolation="nearest")
        ax.set_xticks(range(len(xs)), [_fmt(v) for v in xs])
        ax.set_yticks(range(len(ys)), [_fmt(v) for v in ys])
        ax.set_xlabel(x)
        ax.set_title(t)
        if annotate:
            for r in range(Z.shape[0]):
                for c in range(Z.shape[1]):
                    if np.isfinite(Z[r, c]):
                        shade = "black" if norm(min(Z[r, c], vmax)) > 0.6 else "white"
                        ax.text(c, r, f"{Z[r, c]:.3f}", ha="center", va="center",
                                fontsize=7, color=shade)
    axes[0].set_ylabel(y)
    chosen = cell.get(int(search.best_index_))
    # the plain argmin of the approximate criterion (ties broken as the search breaks them)
    first = int(np.argsort(approx, kind="stable")[0])
    argmin = cell.get(first) if approx[first] < approx[int(search.best_index_)] else None
    for ax in axes:
        if argmin is not None:
            ax.plot(argmin[1], argmin[0], marker="x", color="magenta", markersize=11,
                    markeredgewidth=2.5, linestyle="none", label="approximate argmin")
        if chosen is not None:
            ax.plot(chosen[1], chosen[0], marker="*", color="red", markersize=16,
                    markeredgecolor="black", linestyle="none", label="selected")
    fig.colorbar(image, ax=list(axes), label="CV error", shrink=0.9, extend=extend)
    handles, labels = axes[0].get_legend_handles_labels()
    if own_figure:
        fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=8)
    else:
        axes[0].legend(handles, labels, loc="upper left", fontsize=7, framealpha=0.8)
    if title is None and others:
        title = "slice at " + ", ".join(f"{k}={_fmt(best[k])}" for k in others)
    if title:
        fig.suptitle(title)
    return fig, axes


# ---------------------------------------------------------------------------------------------
# graph over 2-D coordinates
# ---------------------------------------------------------------------------------------------


def plot_graph(X2d, W, labels_or_scores=None, *, ax=None, labeled=None, max_edges=20000,
               cmap=None, edge_color="0.6", edge_alpha=0.35, edge_width=0.5, point_size=12,
               colorbar=True, random_state=0):
    """Draw a graph over 2-D coordinates with points coloured by labels or scores.

    Parameters
    ----------
    X2d : array-like of shape (n, 2)
        Coordinates of the nodes (the data itself, or a 2-D embedding of it).
    W : sparse matrix or ndarray of shape (n, n), or None
        Adjacency (affinity) matrix, e.g. from :func:`fastgssl.graphs.knn_graph`; each edge
        ``W[i, j] != 0`` with ``i < j`` of the symmetrized pattern is one segment.  ``None``
        draws the points only.
    labels_or_scores : array-like of shape (n,), optional
        Integer class labels, ``-1`` marking unlabeled points (drawn small and grey), or
        real-valued scores (decision values, propagated probabilities) drawn with a
        continuous colour map and a colour bar.  Integers (or floats that are all integral)
        are treated as labels.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    labeled : array-like of bool of shape (n,), optional
        Points to highlight (larger, black edge): typically the labeled training points when
        ``labels_or_scores`` are propagated scores.  With labels, ``labels != -1`` is used
        when ``labeled`` is not given.
    max_edges : int, default=20000
        At most this many edges are drawn (a uniform random subset, seeded by
        ``random_state``) so that large graphs stay legible and fast to render.
    cmap : str, optional
        Colour map (default ``"tab10"`` for labels, ``"coolwarm"`` for scores).
    edge_color, edge_alpha, edge_width : edge style.
    point_size : float, default=12
        Marker area of unlabeled points (labeled points are drawn 4x larger).
    colorbar : bool, default=True
        Add a colour bar for scores.
    random_state : int, default=0
        Seed of the edge subsample.

    Returns
    -------
    ax : matplotlib Axes
        With one :class:`~matplotlib.collections.LineCollection` (the edges, label
        ``"edges"``, absent when ``W`` is None or empty) and scatter collections for the
        points: ``"unlabeled"`` and one ``"class <c>"`` per class for labels, ``"points"``
        (and ``"labeled"``) for scores.
    """
    plt = _pyplot()
    from matplotlib.collections import LineCollection

    X2d = np.asarray(X2d, dtype=float)
    if X2d.ndim != 2 or X2d.shape[1] != 2:
        raise ValueError(f"X2d must have shape (n, 2), got {X2d.shape}.")
    n = X2d.shape[0]
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5), layout="constrained")
    if W is not None:
        import scipy.sparse as sp

        if W.shape != (n, n):
            raise ValueError(f"W has shape {W.shape}, expected ({n}, {n}).")
        C = sp.coo_matrix(W)
        keep = C.row != C.col
        rows, cols = C.row[keep], C.col[keep]
        lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
        pairs = np.unique(lo.astype(np.int64) * n + hi)
        if pairs.size > max_edges:
            rng = np.random.default_rng(random_state)
            pairs = rng.choice(pairs, size=int(max_edges), replace=False)
        if pairs.size:
            i, j = pairs // n, pairs % n
            segments = np.stack([X2d[i], X2d[j]], axis=1)
            ax.add_collection(LineCollection(segments, colors=edge_color, alpha=edge_alpha,
                                             linewidths=edge_width, zorder=1, label="edges"))
    if labels_or_scores is None:
        ax.scatter(X2d[:, 0], X2d[:, 1], s=point_size, color="C0", zorder=2, label="points")
    else:
        v = np.asarray(labels_or_scores)
        if v.shape != (n,):
            raise ValueError(f"labels_or_scores must have shape ({n},), got {v.shape}.")
        is_labels = v.dtype.kind in "iub" or (
            v.dtype.kind == "f" and np.all(np.isfinite(v)) and np.all(v == np.round(v))
            and np.unique(v).size <= 20)
        if labeled is not None:
            labeled = np.asarray(labeled, dtype=bool)
        if is_labels:
            v = v.astype(np.int64)
            colors = plt.get_cmap(cmap or "tab10")
            unl = v == -1
            if unl.any():
                ax.scatter(X2d[unl, 0], X2d[unl, 1], s=point_size, color="0.7", zorder=2,
                           label="unlabeled")
            mark = ~unl if labeled is None else labeled
            for k, c in enumerate(np.unique(v[~unl])):
                sel = v == c
                ax.scatter(X2d[sel & ~mark, 0], X2d[sel & ~mark, 1], s=point_size,
                           color=colors(k % colors.N), zorder=2)
                ax.scatter(X2d[sel & mark, 0], X2d[sel & mark, 1], s=4 * point_size,
                           color=colors(k % colors.N), edgecolors="black", linewidths=0.8,
                           zorder=3, label=f"class {c}")
        else:
            sc = ax.scatter(X2d[:, 0], X2d[:, 1], c=v.astype(float), s=point_size,
                            cmap=cmap or "coolwarm", zorder=2, label="points")
            if labeled is not None and labeled.any():
                ax.scatter(X2d[labeled, 0], X2d[labeled, 1], c=v[labeled].astype(float),
                           cmap=cmap or "coolwarm", norm=sc.norm, s=4 * point_size,
                           edgecolors="black", linewidths=0.8, zorder=3, label="labeled")
            if colorbar:
                ax.figure.colorbar(sc, ax=ax, label="score")
        ax.legend(loc="best", fontsize=7, markerscale=0.8)
    ax.autoscale_view()
    ax.set_aspect("equal", adjustable="datalim")
    return ax


# ---------------------------------------------------------------------------------------------
# label-rate curves
# ---------------------------------------------------------------------------------------------


def plot_label_rate_curve(label_rates, curves, *, ax=None, xlabel="labeled points",
                          ylabel="accuracy", logx=False, band=True, title=None):
    """Scores against the number (or fraction) of labeled points, one curve per method.

    Parameters
    ----------
    label_rates : array-like of shape (n_rates,)
        The x values: labels per class, number of labeled points or labeled fraction.
    curves : dict of str to array-like
        Method name to scores, of shape ``(n_rates,)`` or ``(n_rates, n_draws)`` (one column
        per random draw of the labeled set; NaN entries are ignored).
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    xlabel, ylabel : str
        Axis labels (default ``"labeled points"`` and ``"accuracy"``).
    logx : bool, default=False
        Logarithmic x axis.
    band : bool, default=True
        Shade the min-max range over draws (with more than one draw).
    title : str, optional

    Returns
    -------
    ax : matplotlib Axes
        One line per method (the median over draws, label = the method name, in the order of
        ``curves``) and a legend.
    """
    plt = _pyplot()
    rates = np.asarray(label_rates, dtype=float)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4), layout="constrained")
    if not curves:
        raise ValueError("curves is empty.")
    for k, (name, scores) in enumerate(curves.items()):
        S = np.asarray(scores, dtype=float)
        if S.ndim == 1:
            S = S[:, None]
        if S.shape[0] != rates.size:
            raise ValueError(f"curve {name!r} has {S.shape[0]} rows for {rates.size} rates.")
        med = np.nanmedian(S, axis=1)
        (line,) = ax.plot(rates, med, marker="o", markersize=4, color=f"C{k}", label=name)
        if band and S.shape[1] > 1:
            ax.fill_between(rates, np.nanmin(S, axis=1), np.nanmax(S, axis=1),
                            color=line.get_color(), alpha=0.2, linewidth=0)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    if title:
        ax.set_title(title)
    return ax
