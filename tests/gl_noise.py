"""graphlearning's VolumeMBO noise, replayed: common random numbers for fastgssl's VolumeMBO.

graphlearning's C routine (``mbo_main``, v1.7.5) draws from the C library's ``rand()``: one
value per unlabeled point for a random initialization that its Voronoi step then overwrites,
and before each thresholding ``add_temperature``'s float32 Box-Muller pairs,
``z = temperature sqrt(-2 log r1) (cos, sin)(2 * 3.14159 r2)``, over the n x k scores in
row-major order. :class:`GLNoiseVolumeMBO` feeds fastgssl's ``VolumeMBO`` that stream
(glibc's generator, reimplemented and checked against the C library's through ctypes) after
``srand(gl_seed)``, so both methods see the same noise on the same W. Used by
``tests/test_volume_mbo.py`` and ``bench/repro_volume_mbo_gl_noise.py``; glibc only.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numba
import numpy as np

from fastgssl.models import VolumeMBO

RAND_MAX = 2147483647


def libc():
    """The C library (ctypes), or None where it is not glibc's ``rand()``."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    lib = ctypes.CDLL(name)
    lib.srand(12345)
    ref = np.array([lib.rand() for _ in range(2000)])
    return lib if np.array_equal(GlibcRand(12345).draw(2000), ref) else None


@numba.njit(cache=True)
def _glibc_fill(state, pos, out):  # pragma: no cover - compiled
    """glibc's TYPE_3 ``random()``: r_i = r_{i-31} + r_{i-3} (mod 2^32), output r_i >> 1."""
    for t in range(out.size):
        v = (state[(pos - 31) % 34] + state[(pos - 3) % 34]) & 0xFFFFFFFF
        state[pos % 34] = v
        pos += 1
        out[t] = v >> 1
    return pos


class GlibcRand:
    """The stream of glibc's ``rand()`` after ``srand(seed)``."""

    def __init__(self, seed):
        r = [seed or 1]
        for _ in range(30):  # Park-Miller minimal standard, Schrage's method as glibc's
            hi, lo = divmod(r[-1], 127773)
            word = 16807 * lo - 2836 * hi
            r.append(word + RAND_MAX if word < 0 else word)
        r += r[:3]
        self.state = np.array(r, dtype=np.int64) & 0xFFFFFFFF
        self.pos = 34
        self.draw(310)  # glibc discards the first 310 outputs

    def draw(self, m):
        out = np.empty(m, dtype=np.int64)
        self.pos = _glibc_fill(self.state, self.pos, out)
        return out


def box_muller(stream, size, temperature):
    """graphlearning's ``add_temperature`` noise over ``size`` scores (an odd last score gets
    none), float32 as there, divided by the temperature."""
    pairs = size // 2
    r = stream.draw(2 * pairs).reshape(pairs, 2) / float(RAND_MAX)
    r1, r2 = r[:, 0].astype(np.float32), r[:, 1].astype(np.float32)
    with np.errstate(divide="ignore"):
        lsq = np.sqrt(-2.0 * np.log(r1.astype(np.float64))).astype(np.float32)
    scale = (np.float32(temperature) * lsq).astype(np.float64)
    angle = 2 * 3.14159 * r2.astype(np.float64)
    z = np.zeros(size)
    z[0:2 * pairs:2] = (scale * np.cos(angle)).astype(np.float32)
    z[1:2 * pairs:2] = (scale * np.sin(angle)).astype(np.float32)
    return z / temperature


class GLNoiseVolumeMBO(VolumeMBO):
    """VolumeMBO thresholding with graphlearning's noise for ``srand(gl_seed)`` (a connected
    graph: graphlearning draws for all n rows). ``stream`` holds the generator after a fit."""

    gl_seed = 1

    def fit(self, X, y):
        self.stream = None
        return super().fit(X, y)

    def _standard_normal(self, rng, n, free_rows, k):
        if self.stream is None:
            self.stream = GlibcRand(self.gl_seed)
            self.stream.draw(free_rows.size)  # rand() % k per unlabeled point, overwritten
        z = box_muller(self.stream, n * k, self.temperature).reshape(n, k)
        return z[free_rows]


def gl_volume_mbo(gl, lib, seed, W, y_ssl, priors, **params):
    """graphlearning's ``volume_mbo`` after ``srand(seed)``; returns its labels and the
    C library's next ``rand()`` (to check that the replay drew as many values)."""
    lab = np.flatnonzero(y_ssl >= 0)
    lib.srand(seed)
    pred = gl.ssl.volume_mbo(W, class_priors=priors, **params).fit_predict(lab, y_ssl[lab])
    return np.asarray(pred), lib.rand()
