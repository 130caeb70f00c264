"""Time spent compiling Numba kernels, apart from the time spent running them.

A first run compiles every kernel it reaches (later runs load them from Numba's disk cache),
so a wall-clock time taken on a first run mixes the two. :class:`CompileClock` listens to
Numba's ``numba:compile`` event, which fires only for a real compilation (never for a load
from the cache), and adds up the outermost compilations while it is active.
"""

from __future__ import annotations

import contextlib
import time

__all__ = ["CompileClock"]


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
