"""Stub of the lazy front door beside it: its public names where they live, for editors and
type checkers (tests/test_front_doors.py checks it against ``__all__``)."""

from fastgssl.regularizers._laplacian import LaplacianPower as LaplacianPower
from fastgssl.regularizers._laplacian import LaplacianRegularizer as LaplacianRegularizer
from fastgssl.regularizers._laplacian import (
    NormalizedLaplacianRegularizer as NormalizedLaplacianRegularizer,
)
from fastgssl.regularizers._laplacian import connected_components as connected_components
from fastgssl.regularizers._laplacian import degree_centered as degree_centered
from fastgssl.regularizers._laplacian import laplacian as laplacian
from fastgssl.regularizers._laplacian import laplacian_null_space as laplacian_null_space
from fastgssl.regularizers._resolve import build_regularizer as build_regularizer

__all__ = [
    "LaplacianPower",
    "LaplacianRegularizer",
    "NormalizedLaplacianRegularizer",
    "build_regularizer",
    "connected_components",
    "degree_centered",
    "laplacian",
    "laplacian_null_space",
]
