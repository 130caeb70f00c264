"""asv benchmarks for fastgssl.

Conventions (xarray / scikit-learn asv suites): ``setup`` warms the Numba JIT so ``time_*``
excludes compilation; compile and import costs have their own benchmarks; ``track_*`` records
accuracy so that a speed-up which hurts accuracy shows. Run offline on the current
environment with ``asv run --python=same --quick`` from ``asv_bench/``.
"""
