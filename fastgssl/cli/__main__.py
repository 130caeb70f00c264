"""``python -m fastgssl.cli``: the ``fastgssl`` console script."""

import sys

from fastgssl.cli._main import main

sys.exit(main())
