"""Loss specifications and their vectorized, Numba-compiled evaluators.

A :class:`LossSpec` is what a plugin registers: three Numba-compilable scalar functions
``value(y, f, p)``, ``d1(y, f, p)``, ``d2(y, f, p)`` (the loss and its first and second
derivative in the prediction ``f``; ``p`` is a float64 array of the loss parameters in the
order of ``param_names``), plus the parameters' defaults and constraints, the target domain
and the capability flags. ``spec.bind(**params)`` returns a :class:`Loss`, whose ``value``,
``d1`` and ``d2`` methods take numpy arrays.

Compilation policy (see pynndescent #111 and the Numba caching notes): built-in losses are
evaluated by one module-level kernel that dispatches on an integer code and is cached on disk;
a plugin loss gets its loops built once per process by a memoised factory (a kernel closing
over a plugin's jitted function cannot be disk-cached).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from fastgssl import registry
from fastgssl.losses._builtin import PARALLEL_MIN_SIZE, apply_builtin

__all__ = ["Loss", "LossSpec"]

API_VERSION = 1
_CONSTRAINTS = ("positive", "nonnegative", "real")
_DOMAINS = ("binary", "real")


@dataclass(frozen=True, eq=False)
class LossSpec:
    """Declaration of a loss ``ell(y, f)`` with two derivatives in ``f``.

    Parameters
    ----------
    name : str
        Registry name.
    value, d1, d2 : numba dispatchers
        ``@numba.njit`` scalar functions ``(y, f, p) -> float``.
    param_names : tuple of str
        Names of the parameters, in the order they are packed into ``p``.
    defaults : dict
        Default parameter values.
    constraints : dict
        ``name -> "positive" | "nonnegative" | "real"``.
    y_domain : {"binary", "real"}
        ``"binary"``: targets are -1 / +1 (classification losses); ``"real"``: any real.
    convex : bool
        Whether ``f -> ell(y, f)`` is convex (``d2 >= 0``).
    smooth : bool
        Whether ``d2`` is continuous (``False`` for piecewise-quadratic losses such as the
        Huber hinge, whose Newton solvers then need a line search).
    kinks : callable or None
        ``kinks(params) -> tuple of floats``: points where ``d2`` jumps, as margins
        ``z = y f`` (binary domain) or residuals ``f - y`` (real domain).
    description : str
        One line with the formula.
    """

    name: str
    value: object
    d1: object
    d2: object
    param_names: tuple = ()
    defaults: dict = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    y_domain: str = "real"
    convex: bool = True
    smooth: bool = True
    kinks: object = None
    description: str = ""
    api_version: int = API_VERSION
    _builtin_code: int | None = None

    @property
    def builtin_code(self):
        """The number of a built-in loss's compiled loops (:mod:`fastgssl.losses._builtin`,
        set by :mod:`fastgssl.losses._builtin_specs`); None for a plugin loss, whose loops
        are compiled from its ``value`` / ``d1`` / ``d2``."""
        return self._builtin_code

    def __post_init__(self):
        if self.y_domain not in _DOMAINS:
            raise ValueError(f"y_domain must be one of {_DOMAINS}, got {self.y_domain!r}.")
        for pname, rule in self.constraints.items():
            if rule not in _CONSTRAINTS:
                raise ValueError(
                    f"constraint of {pname!r} must be one of {_CONSTRAINTS}, got {rule!r}."
                )
        missing = [p for p in self.param_names if p not in self.defaults]
        if missing:
            raise ValueError(f"loss {self.name!r}: parameters {missing} have no default.")

    def bind(self, **params):
        """Return a :class:`Loss` with these parameter values (others take defaults)."""
        unknown = sorted(set(params) - set(self.param_names))
        if unknown:
            raise ValueError(
                f"loss {self.name!r} has no parameter(s) {unknown}; its parameters are "
                f"{list(self.param_names)}."
            )
        values = {}
        for pname in self.param_names:
            value = params.get(pname, self.defaults[pname])
            rule = self.constraints.get(pname, "real")
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"{pname} of loss {self.name!r} must be a number, got {value!r}.")
            value = float(value)
            if not np.isfinite(value):
                raise ValueError(f"{pname} of loss {self.name!r} must be finite, got {value}.")
            if rule == "positive" and not value > 0:
                raise ValueError(f"{pname} of loss {self.name!r} must be > 0, got {value}.")
            if rule == "nonnegative" and value < 0:
                raise ValueError(f"{pname} of loss {self.name!r} must be >= 0, got {value}.")
            values[pname] = value
        return Loss(self, values)


class Loss:
    """A loss bound to parameter values; evaluates on numpy arrays.

    Attributes
    ----------
    spec : LossSpec
    params : dict
    p : ndarray of float64
        The parameters packed in ``spec.param_names`` order (pass it to the spec's scalar
        functions inside your own Numba kernels).
    """

    def __init__(self, spec, params):
        self.spec = spec
        self.params = dict(params)
        self.p = np.array([params[n] for n in spec.param_names], dtype=np.float64)

    @property
    def name(self):
        return self.spec.name

    def __getattr__(self, item):
        params = self.__dict__.get("params", {})
        if item in params:
            return params[item]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {item!r}")

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Loss({self.spec.name!r}{', ' if args else ''}{args})"

    def _apply(self, order, y, f):
        if _plain_vectors(y, f):  # the solvers' case: no broadcasting or copies (~20 us less)
            shape, yv, fv = y.shape, y, f
        else:
            y, f = np.broadcast_arrays(
                np.asarray(y, dtype=np.float64), np.asarray(f, dtype=np.float64)
            )
            shape = y.shape
            yv = np.ascontiguousarray(y).ravel()
            fv = np.ascontiguousarray(f).ravel()
        out = np.empty(yv.shape[0], dtype=np.float64)
        if self.spec.builtin_code is not None:
            apply_builtin(self.spec.builtin_code, order, yv, fv, self.p, out)
        else:
            _plugin_loop(self.spec, order)(yv, fv, self.p, out)
        return out.reshape(shape)

    def value(self, y, f):
        """Loss values ``ell(y, f)`` elementwise."""
        return self._apply(0, y, f)

    def d1(self, y, f):
        """First derivative ``d ell / d f`` elementwise."""
        return self._apply(1, y, f)

    def d2(self, y, f):
        """Second derivative ``d^2 ell / d f^2`` elementwise."""
        return self._apply(2, y, f)

    def __reduce__(self):
        # Pickle by registry name (spec functions are Numba dispatchers and the kinks may be
        # lambdas): unpickling looks the loss up again, built-in or plugin.
        return _rebuild_loss, (self.spec.name, self.params)

    def __eq__(self, other):
        return isinstance(other, Loss) and other.spec is self.spec and other.params == self.params

    def __hash__(self):
        return hash((id(self.spec), tuple(self.params.items())))


def _plain_vectors(y, f):
    """Both 1-D contiguous float64 arrays of one length (nothing to broadcast or convert)."""
    return (type(y) is np.ndarray and type(f) is np.ndarray and y.ndim == 1
            and y.shape == f.shape and y.dtype == np.float64 and f.dtype == np.float64
            and y.flags.c_contiguous and f.flags.c_contiguous)


def _rebuild_loss(name, params):
    return registry.get("fastgssl.losses", name, **params)


_PLUGIN_LOOPS: dict = {}


def _plugin_loop(spec, order):
    """Build (once per process) the parallel loop applying a plugin's scalar function."""
    key = (id(spec), order)
    loop = _PLUGIN_LOOPS.get(key)
    if loop is None:
        import numba

        scalar = (spec.value, spec.d1, spec.d2)[order]

        @numba.njit(parallel=True)
        def parallel_loop(y, f, p, out):  # pragma: no cover - compiled
            for i in numba.prange(y.shape[0]):
                out[i] = scalar(y[i], f[i], p)

        @numba.njit
        def serial_loop(y, f, p, out):  # pragma: no cover - compiled
            for i in range(y.shape[0]):
                out[i] = scalar(y[i], f[i], p)

        def loop(y, f, p, out):
            if y.shape[0] >= PARALLEL_MIN_SIZE:
                parallel_loop(y, f, p, out)
            else:
                serial_loop(y, f, p, out)

        _PLUGIN_LOOPS[key] = (loop, spec)  # keep spec alive so id() stays unique
        return loop
    return loop[0]
