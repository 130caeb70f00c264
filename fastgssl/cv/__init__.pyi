"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl._folds import check_folds as check_folds
from fastgssl._folds import folds_for_labels as folds_for_labels
from fastgssl._folds import make_folds as make_folds
from fastgssl.cv._api import bif_matrix as bif_matrix
from fastgssl.cv._api import cv_predictions as cv_predictions
from fastgssl.cv._api import cv_result as cv_result
from fastgssl.cv._api import cv_score as cv_score
from fastgssl.cv._base import CVMethod as CVMethod
from fastgssl.cv._exact import ExactMethod as ExactMethod
from fastgssl.cv._influence import BIFMethod as BIFMethod
from fastgssl.cv._influence import FBIFMethod as FBIFMethod
from fastgssl.cv._influence import MarginFBIFMethod as MarginFBIFMethod
from fastgssl.cv._newton import NewtonStepMethod as NewtonStepMethod
from fastgssl.cv._quadratic import ExactQuadraticMethod as ExactQuadraticMethod
from fastgssl.cv._result import CVResult as CVResult
from fastgssl.cv._search import ApproxGridSearchCV as ApproxGridSearchCV
from fastgssl.cv._search import GridSearchCV as GridSearchCV

# former names of the method classes, served beside the new ones (not in __all__)
BIF = BIFMethod
ExactCV = ExactMethod
ExactQuadraticCV = ExactQuadraticMethod
FBIF = FBIFMethod
MarginFBIF = MarginFBIFMethod
NewtonCV = NewtonStepMethod
