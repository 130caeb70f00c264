"""The machine a run was measured on: load average and thread settings as ``track_*`` values.

asv stores these next to the timings of the same run, so a slow timing can be read against
the load of the machine (other jobs on the cores) and the thread pools the run used.  Under
load a thread pool can lose far more than its share of the cores (a barrier waits for the
slowest thread): compare timings only between runs of similar load and thread settings.
"""

from . import environment


class Machine:
    timeout = 60

    def track_load_average_1min(self):
        return environment()["load_1min"]

    track_load_average_1min.unit = "runnable jobs"

    def track_load_average_per_core(self):
        env = environment()
        return env["load_1min"] / env["cpu_count"]

    track_load_average_per_core.unit = "runnable jobs per core"

    def track_numba_num_threads(self):
        return environment()["numba_threads"]

    track_numba_num_threads.unit = "threads"

    def track_numba_config_num_threads(self):
        """``NUMBA_NUM_THREADS`` (the pool's size; numba.get_num_threads() may be lower)."""
        return environment()["NUMBA_NUM_THREADS"]

    track_numba_config_num_threads.unit = "threads"

    def track_fastgssl_default_threads(self):
        """Numba threads of ``n_jobs=None`` now (``fastgssl._threads.default_numba_threads``:
        the cores other jobs leave free, or ``FASTGSSL_NUM_THREADS``)."""
        return environment()["fastgssl_default_threads"]

    track_fastgssl_default_threads.unit = "threads"

    def track_blas_threads(self):
        return environment()["blas_threads"]

    track_blas_threads.unit = "threads"

    def track_cpu_count(self):
        return environment()["cpu_count"]

    track_cpu_count.unit = "cores"
