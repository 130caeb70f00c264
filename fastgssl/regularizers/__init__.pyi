"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

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
