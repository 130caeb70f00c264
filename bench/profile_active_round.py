"""Usage: python bench/profile_active_round.py [n] [rounds | ab | vopt | model_change] [n_rounds]

Time per active-learning round at n = 10,000 (MNIST test images, binary 10-NN, Poisson +
uniform priors, batch 10, one label per class to start).

- ``rounds`` (default): this code, VOpt, Sigma-opt and model change; prints every round's
  wall and CPU seconds (CPU: ``time.process_time``, all threads of the process), the columns
  solved, the thread count (``FASTGSSL_NUM_THREADS``) and the load average, then the largest
  wall round against the issue's 2 s. The issue's setting is two cores:
  ``FASTGSSL_NUM_THREADS=2 python bench/profile_active_round.py 10000 rounds``.
- ``ab``: old against new in one process; old = a new solver setup for every covariance
  solve (MAX_DOWNDATE_RANK = -1), the sketch solved to rtol (SKETCH_RTOL = 0), X digested
  per query and the self-tuned scale searched at every fit.
- ``vopt`` / ``model_change``: cProfile (CPU clock) of one loop.

On an oversubscribed machine (load average above the cores) the CPU seconds of two threads
are inflated by the threads' waits (measured at load 13: first round 9.95 CPU-s / 48 s wall
at two threads against 1.32 CPU-s single-threaded): compare rounds at one thread there."""
import cProfile
import os
import pstats
import sys
import time
import warnings

import numpy as np

import fastgssl.active._covariance as cm
from fastgssl.active import ActiveLearner, active_learning_loop
from fastgssl.datasets import load_mnist_test
from fastgssl.graphs import knn_graph
from fastgssl.models import PoissonLearning

warnings.simplefilter("ignore")
X, y = load_mnist_test()
n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
X, y = X[:n], y[:n]
W = knn_graph(X, n_neighbors=10)
rng = np.random.default_rng(0)
start = [rng.choice(np.flatnonzero(y == c)) for c in range(10)]
y0 = np.full(n, -1)
y0[start] = y[start]


_fit = ActiveLearner._fit_learner


def _fit_with_search(self, X, y, x_key=None):
    # main's fit: the self-tuned scale of the given W searched at every fit
    out = _fit(self, X, y, x_key)
    self.estimator_._induction_scale()
    return out


def run(method, old, rounds=6):
    cm.MAX_DOWNDATE_RANK = -1 if old else 128
    cm.SKETCH_RTOL = 0.0 if old else 1e-3
    ActiveLearner._fit_learner = _fit_with_search if old else _fit
    al = ActiveLearner(PoissonLearning(graph=W, class_priors=np.full(10, 0.1)), criterion=method,
                       batch_size=10, random_state=0)
    if old:
        yy = y0.copy()
        cpu, wall = [], []
        for _ in range(rounds):
            idx = al.query(X, yy)
            cpu.append(al.query_cpu_time_)
            wall.append(al.query_time_)
            yy[idx] = y[idx]
        return np.array(cpu), np.array(wall), al
    h = active_learning_loop(al, X, y0, y, rounds)
    al.n_solved_rounds_ = h.n_solved
    return h.round_cpu_times, h.round_times, al


mode = sys.argv[2] if len(sys.argv) > 2 else "rounds"
n_rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
if mode == "rounds":
    threads = os.environ.get("FASTGSSL_NUM_THREADS", "unset")
    print(f"n = {n}, FASTGSSL_NUM_THREADS = {threads}, {n_rounds} rounds of 10, load "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    worst = 0.0
    for method in ("vopt", "sigma_opt", "model_change"):
        c, w, al = run(method, False, n_rounds)
        worst = max(worst, w.max())
        print(f"{method}: wall per round {np.round(w, 2).tolist()} s | CPU "
              f"{np.round(c, 2).tolist()} s | columns solved {al.n_solved_rounds_.tolist()} "
              f"| load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"largest wall round: {worst:.2f} s (goal <= 2 s at n = 10,000 on two cores)")
elif mode == "ab":
    for _rep in range(2):
        for old in (True, False):
            for method in ("vopt", "model_change"):
                c, w, al = run(method, old)
                print(f"{'old' if old else 'new'} {method}: cpu round1 {c[0]:.2f} later "
                      f"median {np.median(c[1:]):.2f} max {c[1:].max():.2f} | wall round1 "
                      f"{w[0]:.2f} later median {np.median(w[1:]):.2f} max {w[1:].max():.2f} "
                      f"| setups {al._cov.n_setups} | load {os.getloadavg()[0]:.1f}",
                      flush=True)
else:
    pr = cProfile.Profile(time.process_time)
    pr.enable()
    c, w, al = run(mode, False, n_rounds)
    pr.disable()
    print("cpu per round", np.round(c, 2), "wall", np.round(w, 2))
    pstats.Stats(pr).sort_stats("cumulative").print_stats(35)
