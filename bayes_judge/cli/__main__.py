"""``python -m bayes_judge.cli``: the ``bayes-judge`` command."""

import sys

from . import main

sys.exit(main())
