"""Loss evaluation: vectorized Numba kernels against plain numpy, and import / cold start."""

import subprocess
import sys

import numpy as np

from fastgssl.losses import get_loss

from . import log_environment


def _huber_numpy(y, f, h):
    z = y * f
    return np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))


class LossEvaluation:
    params = (["square", "huber_hinge", "logistic"], [10_000, 1_000_000])
    param_names = ["loss", "n"]

    def setup(self, name, n):
        log_environment(type(self).__name__)
        rng = np.random.default_rng(0)
        self.y = rng.choice([-1.0, 1.0], size=n)
        self.f = rng.normal(size=n)
        self.loss = get_loss(name)
        for fn in (self.loss.value, self.loss.d1, self.loss.d2):
            fn(self.y, self.f)  # compile / load from cache outside the timing

    def time_value(self, name, n):
        self.loss.value(self.y, self.f)

    def time_d1(self, name, n):
        self.loss.d1(self.y, self.f)

    def time_d2(self, name, n):
        self.loss.d2(self.y, self.f)


class HuberAgainstNumpy:
    def setup(self):
        log_environment(type(self).__name__)
        rng = np.random.default_rng(0)
        self.y = rng.choice([-1.0, 1.0], size=1_000_000)
        self.f = rng.normal(size=1_000_000)
        self.loss = get_loss("huber_hinge", h=0.05)
        self.loss.value(self.y, self.f)

    def time_fastgssl(self):
        self.loss.value(self.y, self.f)

    def time_numpy_reference(self):
        _huber_numpy(self.y, self.f, 0.05)


def _fresh_process(code):
    subprocess.run([sys.executable, "-c", code], check=True)


class ColdStart:
    """Whole fresh processes: the import, and the first loss call (from the disk cache)."""

    timeout = 300
    number = 1
    repeat = 3

    def setup(self):
        log_environment(type(self).__name__)
        _fresh_process(_FIRST_CALL)  # make sure the disk cache is populated

    def time_import_fastgssl(self):
        _fresh_process("import fastgssl")

    def time_first_loss_call_cached(self):
        _fresh_process(_FIRST_CALL)


_FIRST_CALL = (
    "import numpy as np; from fastgssl.losses import get_loss;"
    "get_loss('huber_hinge', h=0.1).d1(np.ones(3), np.zeros(3))"
)
