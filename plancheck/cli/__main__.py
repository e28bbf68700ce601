"""`python -m plancheck.cli` runs the command line."""

import sys

from plancheck.cli import main

sys.exit(main())
