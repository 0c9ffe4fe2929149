"""``python -m verifiers_lite.cli``: the same as the ``vf-lite`` console script."""

import sys

from verifiers_lite.cli.commands import main

sys.exit(main())
