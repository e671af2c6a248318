"""``python -m analysis``: the command line (see :mod:`analysis.cli`)."""

from analysis.cli import main

if __name__ == "__main__":
    main()
