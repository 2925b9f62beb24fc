"""``python -m jaxecon.cli``: the ``jaxecon`` command."""

import sys

from jaxecon.cli import main

sys.exit(main())
