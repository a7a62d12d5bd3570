"""``python -m arrjit``: see ``arrjit.cli``."""
import sys

from arrjit.cli import main

if __name__ == "__main__":
    sys.exit(main())
