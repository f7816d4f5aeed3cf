"""`python -m evtui.cli`: the `evtui` command."""

import sys

from evtui.cli import main

sys.exit(main())
