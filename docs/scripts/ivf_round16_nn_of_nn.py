"""Issue 54, sixteenth round: can neighbours of neighbours buy the inverted file's probes?

The 10^6 x 50 pipeline's graph is two thirds of its time, and the search's pairs are
those of the probed lists (docs/benchmarks.md, fifteenth round). This simulation builds
``IVFGraph`` with fewer probes (``n_probe`` given) on ``make_gaussian_mixture(n, 50, 10,
1.0)`` in float32 and refines its lists by one or two passes of neighbours of neighbours
(NN-descent's local join without sampling: every neighbour's forward lists, and with
``rev=True`` also its reverse lists), float64 distances, one sorted list of ``k`` kept per
point. Recall@10 on 1,000 points with exact neighbours (ties count, as ``knn_recall``).

Usage::

    python docs/scripts/ivf_round16_nn_of_nn.py 200000 8 15 25 40 \
        > docs/scripts/ivf_round16_nn_of_nn.txt
"""
import sys
import time

import numba as nb
import numpy as np

from fastgssl.datasets import make_gaussian_mixture
from fastgssl.graphs import IVFGraph
from fastgssl.graphs._nndescent import draw_recall_sample, exact_sample_lists


@nb.njit(parallel=True, cache=False)
def nn_of_nn(X, nbr, nd, rptr, rind, use_rev):
    n, k = nbr.shape
    d = X.shape[1]
    out_i = nbr.copy()
    out_d = nd.copy()
    nt = nb.get_num_threads()
    stamp = np.full((nt, n), -1, dtype=np.int64)
    chunk = (n + nt - 1) // nt
    formed = np.zeros(nt, dtype=np.int64)
    for t in nb.prange(nt):
        st = stamp[t]
        for q in range(t * chunk, min(n, (t + 1) * chunk)):
            st[q] = q
            hi = out_i[q]
            hd = out_d[q]
            for j in range(k):
                st[nbr[q, j]] = q
            for j in range(k):
                p = nbr[q, j]
                # forward neighbours of p, then (optionally) reverse neighbours of p
                m = k + (rptr[p + 1] - rptr[p] if use_rev else 0)
                for jj in range(m):
                    c = nbr[p, jj] if jj < k else rind[rptr[p] + jj - k]
                    if st[c] == q:
                        continue
                    st[c] = q
                    s = 0.0
                    for a in range(d):
                        v = np.float64(X[q, a]) - np.float64(X[c, a])
                        s += v * v
                    formed[t] += 1
                    if s < hd[k - 1]:
                        pos = k - 1
                        while pos > 0 and hd[pos - 1] > s:
                            hd[pos] = hd[pos - 1]
                            hi[pos] = hi[pos - 1]
                            pos -= 1
                        hd[pos] = s
                        hi[pos] = c
    return out_i, out_d, formed.sum()


def reverse(nbr, n):
    src = np.repeat(np.arange(n), nbr.shape[1])
    dst = nbr.ravel()
    order = np.argsort(dst, kind="stable")
    ptr = np.concatenate(([0], np.cumsum(np.bincount(dst, minlength=n))))
    return ptr, src[order].astype(np.int64)


def recall(idx, sq, sample, ex, ex_sq):
    k = ex.shape[1]
    a = idx[sample]
    hit = (a[:, :, None] == ex[:, None, :]).any(2) | (sq[sample] <= ex_sq[:, k - 1][:, None])
    return hit.mean()


n = int(sys.argv[1])
probes = [int(p) for p in sys.argv[2:]]
X = make_gaussian_mixture(n, 50, 10, 1.0, random_state=0)[0]
X = X.astype(np.float32)
sample = draw_recall_sample(n, 1000, 1)
ex, ex_sq = exact_sample_lists(X, sample, 10, None)
for p in probes:
    b = IVFGraph(n_neighbors=10, n_probe=p, random_state=0, recall_sample=0)
    t0 = time.perf_counter()
    b(X)
    tg = time.perf_counter() - t0
    nbr = b.neighbors_
    # the lists' squared distances in float64
    D = np.empty(nbr.shape)
    for s in range(0, n, 100000):
        D[s:s + 100000] = ((X[s:s + 100000, None, :].astype(np.float64)
                            - X[nbr[s:s + 100000]]) ** 2).sum(-1)
    r0 = recall(nbr, D, sample, ex, ex_sq)
    line = (f"probe {p}: graph {tg:.1f} s (search {b.stage_times_['search']:.1f}), "
            f"pairs {100 * b.scan_fraction_:.2f} %, recall {r0:.4f}")
    for rev in (False, True):
        rptr, rind = reverse(nbr, n)
        nn_of_nn(X[:2000], nbr[:2000] % 2000, D[:2000], rptr[:2001] * 0, rind[:0], rev)  # compile
        t0 = time.perf_counter()
        oi, od, formed = nn_of_nn(X, nbr, D, rptr, rind, rev)
        t1 = time.perf_counter() - t0
        r1 = recall(oi, od, sample, ex, ex_sq)
        oi2, od2, f2 = nn_of_nn(X, oi, od, *reverse(oi, n), rev)
        r2 = recall(oi2, od2, sample, ex, ex_sq)
        line += (f" | rev={rev}: 1 pass {t1:.1f} s, {formed / n:.0f} cand/pt -> {r1:.4f}"
                 f", 2 passes -> {r2:.4f}")
    print(line, flush=True)
