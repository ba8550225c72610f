"""``python -m rlbook.cli``: the ``rlbook`` command run as a module (``rlbook bench`` times a build this way)."""

import sys

from rlbook.cli import main

sys.exit(main())
