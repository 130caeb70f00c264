"""Stub of the lazy front door beside it: its public names where they live, for editors and
type checkers (tests/test_front_doors.py checks it against ``__all__``)."""

from fastgssl.cli._main import build_parser as build_parser
from fastgssl.cli._main import main as main
from fastgssl.cli._select import select as select
from fastgssl.cli._warmup import warmup as warmup

__all__ = [
    "build_parser",
    "main",
    "select",
    "warmup",
]
