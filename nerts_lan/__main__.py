"""``python -m nerts_lan`` is the ``nerts-lan`` command."""

import sys

from .cli import main

sys.exit(main())
