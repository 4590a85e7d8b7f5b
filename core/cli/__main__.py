"""``python -m ensembo.cli`` is the same as the ``ensembo`` command."""

import sys

from ensembo.cli import main

sys.exit(main())
