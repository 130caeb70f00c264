"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl.cli._label import label as label
from fastgssl.cli._main import build_parser as build_parser
from fastgssl.cli._main import main as main
from fastgssl.cli._select import select as select
from fastgssl.cli._warmup import warmup as warmup
