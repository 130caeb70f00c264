"""Content digests of arrays and sparse matrices: keys under which work is shared (the
grid search's sharing keys, the reused Laplacian solver setups)."""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp

__all__ = ["content_digest"]


def content_digest(A):
    """A hashable digest of the entries, shape and dtype of a dense array or a sparse matrix
    (equal for equal contents; a sparse matrix is read in its own format, so a CSR and a CSC
    copy of one matrix differ)."""
    digest = hashlib.blake2b(digest_size=16)
    if sp.issparse(A):
        parts = [getattr(A, name) for name in ("indptr", "indices", "data", "row", "col")
                 if getattr(A, name, None) is not None]
        fmt = A.format
    else:
        A = np.asarray(A)
        parts, fmt = [A], "dense"
    for part in parts:
        digest.update(np.ascontiguousarray(part).tobytes())
    return (fmt, digest.hexdigest(), tuple(A.shape), str(A.dtype))
