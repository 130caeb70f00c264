"""Time spent compiling Numba kernels, apart from the time spent running them.

A first run compiles every kernel it reaches (later runs load them from Numba's disk cache),
so a wall-clock time taken on a first run mixes the two. :class:`CompileClock` listens to
Numba's ``numba:compile`` event, which fires only for a real compilation (never for a load
from the cache), and adds up the outermost compilations while it is active. A first
compilation longer than a few seconds says so once per process
(:func:`install_compile_notice`); ``fastgssl warmup`` (:func:`fastgssl.cli.warmup`)
compiles the main paths ahead of time.
"""

from __future__ import annotations

import contextlib
import logging
import time

__all__ = ["CompileClock", "install_compile_notice", "silence_compile_notice"]


class CompileClock:
    """Seconds of Numba compilation, read at any time while the clock is active.

    Examples
    --------
    >>> from fastgssl._jit import CompileClock
    >>> with CompileClock() as clock:
    ...     before = clock.seconds
    ...     _ = sum(range(10))           # no Numba kernel reached: nothing compiled
    >>> clock.seconds - before
    0.0
    """

    def __init__(self):
        self._stack = None
        self._listener = None

    def __enter__(self):
        from numba.core import event

        self._listener = event.TimingListener()
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(event.install_listener("numba:compile", self._listener))
        return self

    def __exit__(self, *exc):
        self._stack.close()
        return False

    @property
    def seconds(self):
        """Compilation seconds so far (0.0 before the first compilation)."""
        listener = self._listener
        return float(listener.duration) if listener is not None and listener.done else 0.0

    @contextlib.contextmanager
    def split(self):
        """Time a block: yields a dict that holds, once the block ends, its ``wall`` seconds,
        the ``compile`` seconds inside it and ``run`` = wall - compile."""
        out = {}
        c0, t0 = self.seconds, time.perf_counter()
        try:
            yield out
        finally:
            wall = time.perf_counter() - t0
            compiled = self.seconds - c0
            out.update(wall=wall, compile=compiled, run=max(wall - compiled, 0.0))


# -- the first compilation says so, once per process ------------------------------------------

#: compilation seconds (summed over the outermost compilations of one burst) after which the
#: notice is logged
NOTICE_SECONDS = 3.0
_notice = {"installed": False, "said": False, "depth": 0, "start": 0.0, "burst": 0.0,
           "last_end": 0.0}
logger = logging.getLogger("fastgssl")


class _CompileNotice:
    """Numba ``numba:compile`` listener: when one burst of compilations (outermost ones
    less than a second apart) passes :data:`NOTICE_SECONDS`, log one line (logger
    ``"fastgssl"``, WARNING: shown on stderr without any logging setup, never raised as a
    Python warning) saying that kernels are compiling and how to compile them ahead of time.
    """

    def on_start(self, event):
        if _notice["depth"] == 0:
            now = time.perf_counter()
            if now - _notice["last_end"] > 1.0:
                _notice["burst"] = 0.0
            _notice["start"] = now
        _notice["depth"] += 1

    def on_end(self, event):
        _notice["depth"] -= 1
        if _notice["depth"] > 0:
            return
        now = time.perf_counter()
        _notice["burst"] += now - _notice["start"]
        _notice["last_end"] = now
        if not _notice["said"] and _notice["burst"] > NOTICE_SECONDS:
            _notice["said"] = True
            logger.warning(
                "fastgssl: compiling Numba kernels for their first run (%.0f s so far; "
                "cached on disk, later runs load them). `fastgssl warmup` compiles them "
                "ahead of time.", _notice["burst"])


def silence_compile_notice():
    """No first-compilation notice in this process from now on: for callers that compile
    on purpose (``fastgssl warmup``), to whom the notice, which names that command, would
    only repeat what they asked for."""
    _notice["said"] = True


def install_compile_notice():
    """Register :class:`_CompileNotice` once per process (the kernels' modules call it)."""
    if _notice["installed"]:
        return
    from numba.core import event

    listener = type("CompileNoticeListener", (_CompileNotice, event.Listener), {})
    event.register("numba:compile", listener())
    _notice["installed"] = True
