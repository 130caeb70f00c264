"""``python -m fastgssl``: the ``fastgssl`` command line (as ``python -m fastgssl.cli``)."""

import sys

from fastgssl.cli import main

sys.exit(main())
