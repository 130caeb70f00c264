"""Digests of IVFGraph's W (in memory and on a Dask LocalCluster) for fixed inputs (issue 55).

The inverted-file driver's refactor must leave every graph bit for bit as it was: this script
builds W for a few fixed inputs in memory and on a 2-worker LocalCluster (one thread each),
prints one line per build with SHA-256 digests of W (``indptr``, ``indices``, ``data``), of
``neighbors_`` and of ``kth_sq_distances_``, and ``n_probe_``, ``n_lists_``, ``recall_``.
Its output on the commit before the change is ``bench/results/ivf_w_digests.txt``;
``--check`` compares a new run with that file line for line.

    PYTHONPATH=$PWD python bench/ivf_w_digests.py            # print
    PYTHONPATH=$PWD python bench/ivf_w_digests.py --check    # compare with the stored file

(``scan_fraction_`` is not part of the digest: how many pairs a search forms is not the
graph.)
"""

import argparse
import hashlib
import pathlib
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from fastgssl.graphs import IVFGraph

STORED = pathlib.Path(__file__).parent / "results" / "ivf_w_digests.txt"


def _mixture(n, d, seed, dtype=np.float64, duplicates=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(8, d))
    X = centres[rng.integers(0, 8, size=n)] + rng.normal(size=(n, d))
    if duplicates:  # equal rows: ties the float32 filter cannot separate
        X[rng.choice(n, duplicates, replace=False)] = X[0]
    return X.astype(dtype)


CASES = [
    ("mix64_probe4", dict(n=3000, d=8, seed=0), dict(n_neighbors=7, n_lists=30, n_probe=4,
                                                     random_state=0)),
    ("mix32_tuned", dict(n=2500, d=12, seed=1, dtype=np.float32),
     dict(n_neighbors=10, n_lists=40, target_recall=0.9, random_state=3)),
    ("mix64_gauss_k15", dict(n=2000, d=5, seed=2),
     dict(n_neighbors=15, weight="gaussian", n_lists=25, n_probe=3, random_state=1)),
    ("dups_selftuned", dict(n=1800, d=6, seed=4, duplicates=60),
     dict(n_neighbors=8, weight="self_tuned", n_lists=20, n_probe=2, random_state=2)),
    ("all_lists", dict(n=1200, d=4, seed=5), dict(n_neighbors=6, n_lists=12, n_probe=12,
                                                  random_state=0)),
]


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _line(name, where, builder, W):
    W = sp.csr_matrix(W)
    W.sort_indices()
    return (f"{name} {where} W={_digest(W.indptr, W.indices, W.data)} "
            f"neighbors={_digest(builder.neighbors_)} "
            f"kth={_digest(builder.kth_sq_distances_)} n_probe={builder.n_probe_} "
            f"n_lists={builder.n_lists_} recall={builder.recall_!r}")


def run():
    import dask.array as da
    from distributed import Client, LocalCluster

    lines = []
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        for name, data, kw in CASES:
            X = _mixture(**data)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                b = IVFGraph(**kw)
                lines.append(_line(name, "memory", b, b(X)))
                b = IVFGraph(**kw)
                lines.append(_line(name, "dask_array", b, b(da.from_array(X, chunks=(613, -1)))))
                b = IVFGraph(client=client, **kw)
                lines.append(_line(name, "numpy_client", b, b(X)))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with bench/results/ivf_w_digests.txt")
    args = parser.parse_args()
    lines = run()
    print("\n".join(lines))
    if args.check:
        stored = STORED.read_text().splitlines()
        stored = [s for s in stored if s and not s.startswith("#")]
        if stored != lines:
            diff = [f"- {a}\n+ {b}" for a, b in zip(stored, lines) if a != b]
            print("DIFFERENT from the stored digests:\n" + "\n".join(diff), file=sys.stderr)
            sys.exit(1)
        print(f"identical to {STORED.name} ({len(lines)} builds)")


if __name__ == "__main__":
    main()
