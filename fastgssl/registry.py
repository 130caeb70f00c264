"""Plugin registry: losses, regularizers, graph builders and CV approximators.

Four entry-point groups make fastgssl extensible without touching its core:

=========================  ===============================================================
group                      an entry point names ...
=========================  ===============================================================
``fastgssl.losses``        a :class:`fastgssl.losses.LossSpec` (Numba scalar functions)
``fastgssl.regularizers``  a factory ``(**params) -> callable W -> Q`` (a class whose
                           instances are callable will do)
``fastgssl.graphs``        a factory ``(**params) -> callable X -> W`` (sparse, symmetric)
``fastgssl.cv``            a factory ``(**params) -> CV approximator``
=========================  ===============================================================

Built-ins sit on a fast path: each group is named after the fastgssl package that declares
its built-ins, and that package, when imported, hands the registry a table of
``"module:attribute"`` strings naming its own modules (:func:`register_builtins`), so the
registry (below every such package) names none of them. The table is read without scanning
package metadata and each built-in is imported only when its name is first used. Third-party
entry points are discovered with :func:`importlib.metadata.entry_points` on the first lookup
that needs them, cached, and re-read by :func:`refresh`. ``import fastgssl`` loads no plugin.

Rules
-----
* A plugin that fails to load (module import error, missing attribute, wrong object type)
  becomes a :class:`PluginWarning` naming the distribution and the entry point; it is skipped
  and everything else keeps working.
* A plugin never replaces a built-in: the built-in wins, a warning names the plugin, and the
  plugin stays reachable as ``"distribution:name"``.
* Two plugins with the same name: looking up the bare name raises an error naming both;
  ``"distribution:name"`` always works.
* ``FASTGSSL_DISABLE_PLUGINS=1`` ignores third-party entry points altogether.
* A factory gets only the arguments it accepts: the learners pass ``power`` to every
  regularizer, and a factory without a ``power`` parameter is called without it while
  ``power=1`` (the default; any other power is an error naming it). Any other argument a
  factory does not take is a ValueError listing the ones it does.
"""

from __future__ import annotations

import importlib
import inspect
import os
import warnings
from dataclasses import dataclass, field

from fastgssl.exceptions import PluginWarning

__all__ = [
    "GROUPS",
    "PluginWarning",
    "PluginEntry",
    "available",
    "get",
    "load",
    "refresh",
    "register_builtins",
]

GROUPS = (
    "fastgssl.losses",
    "fastgssl.regularizers",
    "fastgssl.graphs",
    "fastgssl.cv",
)

# What each group's package declares on import (:func:`register_builtins`), on its own floor:
# the registry names no module above it. group -> _GroupDeclaration
_DECLARED: dict[str, _GroupDeclaration] = {}

BUILTIN = "built-in"


@dataclass
class PluginEntry:
    """One registered name: where it comes from and whether it loaded."""

    group: str
    name: str
    value: str
    origin: str = BUILTIN  # "built-in" or "distribution version"
    distribution: str | None = None
    status: str = "not loaded"  # "not loaded", "loaded", "failed: ...", "shadowed: ..."
    _entry_point: object = field(default=None, repr=False)
    _object: object = field(default=None, repr=False)

    @property
    def qualified_name(self):
        return self.name if self.distribution is None else f"{self.distribution}:{self.name}"

    def load(self):
        """The object this entry names (a spec or a factory), imported and checked on first
        use (:func:`fastgssl.registry.load` finds the entry by name and calls this)."""
        if self._object is not None:
            return self._object
        if self.status.startswith("failed"):
            raise ValueError(
                f"plugin {self.qualified_name!r} of group {self.group} failed to load "
                f"({self.status}); fix or uninstall distribution {self.distribution!r}."
            )
        if self.distribution is None:
            obj = _import_value(self.value)  # built-in: an error here is a fastgssl bug
        else:
            try:
                obj = self._entry_point.load()
            except Exception as exc:  # noqa: BLE001 - any plugin failure must not crash us
                what = "attribute" if isinstance(exc, AttributeError) else "module"
                return _fail(self, f"{what} failed to load: {type(exc).__name__}: {exc}")
        problem = _check_type(self.group, obj)
        if problem is not None:
            if self.distribution is None:
                raise TypeError(f"built-in {self.name!r} of {self.group}: {problem}")
            return _fail(self, problem)
        self._object = obj
        self.status = "loaded"
        return obj


@dataclass(frozen=True)
class _GroupDeclaration:
    """What a group's package declares: its built-ins and how to check and call entries."""

    builtins: dict
    entry_type: type | str | None = None
    context_defaults: dict = field(default_factory=dict)


def register_builtins(group, builtins, *, entry_type=None, context_defaults=None):
    """Declare the built-ins of ``group``; called once by the package the group is named after.

    Each of fastgssl's packages with a group (``fastgssl.losses``, ``fastgssl.regularizers``,
    ``fastgssl.graphs``, ``fastgssl.cv``) calls this when it is imported, with a table of
    ``"module:attribute"`` strings naming its own modules: the built-ins stay on their own
    floor and are imported only when first used. Third-party code registers through entry
    points, not through this function.

    Parameters
    ----------
    group : str
        One of :data:`GROUPS`.
    builtins : dict of str to str
        Name -> ``"module:attribute"``.
    entry_type : type or str, optional
        The type an entry of the group must be, or its ``"module:attribute"`` (imported on
        the first check: a :class:`fastgssl.losses.LossSpec` for the losses); without it an
        entry must be a callable factory.
    context_defaults : dict, optional
        Arguments the library passes to every factory of the group, with their default: a
        factory that does not take one is called without it while it holds the default
        (``power=1`` for the regularizers).
    """
    _check_group(group)
    _DECLARED[group] = _GroupDeclaration(dict(builtins), entry_type,
                                         dict(context_defaults or {}))
    _builtin_entries.pop(group, None)


def _declaration(group):
    """The group's declaration, importing the package the group is named after when it has
    not declared yet (the import of a package declares its group: no metadata is read)."""
    declared = _DECLARED.get(group)
    if declared is None:
        importlib.import_module(group)
        declared = _DECLARED.get(group)
        if declared is None:  # a fastgssl bug: the package forgot its register_builtins
            raise RuntimeError(f"package {group} did not declare the built-ins of its group.")
    return declared


# group -> {qualified or bare name -> PluginEntry}; built-ins are created lazily too.
_builtin_entries: dict[str, dict[str, PluginEntry]] = {}
_plugin_cache: dict[str, list[PluginEntry]] = {}


def _check_group(group):
    if group not in GROUPS:
        raise ValueError(f"group must be one of {list(GROUPS)}, got {group!r}.")


def _plugins_disabled():
    return os.environ.get("FASTGSSL_DISABLE_PLUGINS", "").strip().lower() in {"1", "true", "yes"}


def _iter_entry_points(group):
    """Yield ``(entry_point, distribution_name, distribution_version)`` for a group.

    The single place that reads package metadata (tests replace it with hand-built
    :class:`importlib.metadata.EntryPoint` objects).
    """
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        dist = getattr(ep, "dist", None)
        name = getattr(dist, "name", None) or "<unknown distribution>"
        version = getattr(dist, "version", None) or "?"
        yield ep, name, version


def _builtins(group):
    table = _builtin_entries.get(group)
    if table is None:
        table = {
            name: PluginEntry(group=group, name=name, value=value)
            for name, value in _declaration(group).builtins.items()
        }
        _builtin_entries[group] = table
    return table


def _plugins(group):
    """Third-party entries of a group, discovered once and cached."""
    if _plugins_disabled():
        return []
    cached = _plugin_cache.get(group)
    if cached is not None:
        return cached
    entries = []
    builtins = _declaration(group).builtins
    for ep, dist, version in _iter_entry_points(group):
        entry = PluginEntry(
            group=group,
            name=ep.name,
            value=ep.value,
            origin=f"{dist} {version}",
            distribution=dist,
            _entry_point=ep,
        )
        if ep.name in builtins:
            entry.status = "shadowed: a built-in has this name"
            warnings.warn(
                f"plugin {ep.name!r} of distribution {dist!r} (entry point {ep.name} = "
                f"{ep.value} in group {group}) has the name of a built-in; the built-in is "
                f"used. Reach the plugin as {dist + ':' + ep.name!r}.",
                PluginWarning,
                stacklevel=3,
            )
        entries.append(entry)
    _plugin_cache[group] = entries
    return entries


def refresh(group=None):
    """Forget discovered plugins (and loaded objects) so the next lookup re-reads metadata."""
    groups = GROUPS if group is None else (group,)
    for g in groups:
        _check_group(g)
        _plugin_cache.pop(g, None)
        _builtin_entries.pop(g, None)


def available(group):
    """List the names registered in ``group`` without importing any plugin code.

    Returns
    -------
    list of dict
        One dict per entry with keys ``name`` (use it with :func:`get`), ``origin``
        (``"built-in"`` or ``"<distribution> <version>"``), ``value`` (``module:attr``) and
        ``status`` (``"not loaded"``, ``"loaded"``, ``"failed: ..."``, ``"shadowed: ..."``,
        ``"conflict: ..."``).
    """
    _check_group(group)
    rows = []
    for entry in _builtins(group).values():
        rows.append(_row(entry, entry.name))
    plugins = _plugins(group)
    counts = {}
    for entry in plugins:
        counts[entry.name] = counts.get(entry.name, 0) + 1
    for entry in plugins:
        if entry.status.startswith("shadowed") or counts[entry.name] > 1:
            row = _row(entry, entry.qualified_name)
            if counts[entry.name] > 1 and not entry.status.startswith("shadowed"):
                row["status"] = f"conflict: {counts[entry.name]} plugins named {entry.name!r}"
        else:
            row = _row(entry, entry.name)
        rows.append(row)
    return rows


def _row(entry, name):
    return {"name": name, "origin": entry.origin, "value": entry.value, "status": entry.status}


def _resolve(group, name):
    """Find the entry for a bare or ``distribution:name`` name."""
    builtins = _builtins(group)
    if name in builtins:
        return builtins[name]
    plugins = _plugins(group)
    if ":" in name:
        dist, _, bare = name.partition(":")
        for entry in plugins:
            if entry.name == bare and entry.distribution == dist:
                return entry
        raise KeyError(name)
    matches = [e for e in plugins if e.name == name]
    if len(matches) > 1:
        names = ", ".join(f"{e.distribution!r} ({e.value})" for e in matches)
        quals = " or ".join(repr(e.qualified_name) for e in matches)
        raise ValueError(
            f"{len(matches)} plugins in group {group} are named {name!r}: {names}. Choose "
            f"one with its qualified name, {quals}."
        )
    if matches:
        return matches[0]
    raise KeyError(name)


def _import_value(value):
    module_name, _, attr = value.partition(":")
    obj = importlib.import_module(module_name)
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    return obj


def _check_type(group, obj):
    """Return an error message if ``obj`` cannot serve in ``group``, else None."""
    kind = _declaration(group).entry_type
    if isinstance(kind, str):  # "module:attribute" of the group's own package
        kind = _import_value(kind)
    if kind is not None:
        if not isinstance(obj, kind):
            return (f"expected a {kind.__module__.split('._')[0]}.{kind.__qualname__}, "
                    f"got {type(obj).__name__}")
        return None
    if not callable(obj):
        return f"expected a callable factory, got {type(obj).__name__}"
    return None


def load(group, name):
    """Return the object an entry names (a spec or a factory), importing it on first use.

    Raises
    ------
    ValueError
        Unknown name, failed plugin, or an ambiguous plugin name.
    """
    _check_group(group)
    if not isinstance(name, str):
        raise ValueError(f"a {group} name must be a string, got {type(name).__name__}.")
    try:
        entry = _resolve(group, name)
    except KeyError:
        names = sorted(row["name"] for row in available(group))
        raise ValueError(
            f"unknown name {name!r} in group {group}; available: {names}."
        ) from None
    return entry.load()


def _fail(entry, reason):
    entry.status = f"failed: {reason}"
    warnings.warn(
        f"skipping plugin {entry.name!r} of distribution {entry.distribution!r} "
        f"(entry point {entry.name} = {entry.value} in group {entry.group}): {reason}",
        PluginWarning,
        stacklevel=4,
    )
    raise ValueError(
        f"plugin {entry.qualified_name!r} of group {entry.group} failed to load ({reason}); "
        f"fix or uninstall distribution {entry.distribution!r}."
    )


def _factory_parameters(factory):
    """The keyword names ``factory`` takes, or None when it takes any (``**kwargs``, or a
    signature that cannot be read: a compiled callable)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    names = set()
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            names.add(p.name)
    return names


def _accepted(group, name, factory, params):
    """``params`` less the context arguments ``factory`` does not take (at their default);
    a ValueError naming any other argument it does not take."""
    accepted = _factory_parameters(factory)
    if accepted is None:
        return params
    out = {}
    unknown = []
    for key, value in params.items():
        if key in accepted:
            out[key] = value
            continue
        defaults = _declaration(group).context_defaults
        if key in defaults and _is_default(value, defaults[key]):
            continue  # the library's default, not the user's choice: not passed
        unknown.append(f"{key}={value!r}")
    if unknown:
        takes = ", ".join(sorted(accepted)) or "no arguments"
        raise ValueError(
            f"{group} entry {name!r} ({getattr(factory, '__qualname__', factory)!r}) does not "
            f"take {', '.join(unknown)}; it takes: {takes}. Set only those (for a "
            f"regularizer: regularizer_params={{...}} on the learner)."
        )
    return out


def _is_default(value, default):
    try:
        return bool(value == default)
    except Exception:  # an array or an object without a plain comparison
        return False


def get(group, name, **params):
    """Return a ready object for ``name`` in ``group``.

    A loss spec is bound to ``params`` (``spec.bind(**params)``); any other entry is a
    factory called as ``factory(**params)`` with the arguments it accepts: a context
    argument the library passes to every factory of the group (``power`` for the
    regularizers) is left out for a factory without it while it holds its default (1);
    any other argument the factory does not take is a ValueError naming it and the ones
    it takes.

    Examples
    --------
    >>> from fastgssl import registry
    >>> loss = registry.get("fastgssl.losses", "huber_hinge", h=0.1)
    >>> loss.params
    {'h': 0.1}
    """
    obj = load(group, name)
    if hasattr(obj, "bind"):
        return obj.bind(**params)
    return obj(**_accepted(group, name, obj, params))
