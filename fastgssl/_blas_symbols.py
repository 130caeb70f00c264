"""scipy's Cython BLAS / LAPACK entry points as Numba external functions.

Each is registered under a fixed symbol name (``fastgssl_<module>_<name>_addr``) so that the
Numba functions calling it stay cacheable: the address is bound when this module is imported,
not baked into the cached code. Arguments are Fortran pointers passed as addresses
(``a.ctypes.data`` plus a byte offset). Used by the active-set solver's factor updates
(:mod:`fastgssl.solvers._lapack_loops`) and the inverted-file search's GEMM blocks
(:mod:`fastgssl.graphs._ivf_pairs`).
"""

from __future__ import annotations

import llvmlite.binding as _llvm
from numba import types as _nbt
from numba.extending import get_cython_function_address as _cython_address

__all__ = ["external"]


def external(module, name, nargs):
    """The routine ``name`` of ``scipy.linalg.<module>`` taking ``nargs`` pointer arguments."""
    symbol = f"fastgssl_{module}_{name}_addr"
    _llvm.add_symbol(symbol, _cython_address(f"scipy.linalg.{module}", name))
    return _nbt.ExternalFunction(symbol, _nbt.void(*([_nbt.uintp] * nargs)))
