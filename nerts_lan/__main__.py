"""``python -m nerts_lan`` is the ``nerts-lan`` command."""

import sys

from nerts_lan.cli.main import main

# The guard matters: a process pool started with "spawn" (Windows, macOS) imports this module
# again in each worker, as ``__mp_main__``, and must not run the command there a second time.
if __name__ == "__main__":
    sys.exit(main())
