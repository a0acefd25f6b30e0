"""`python -m eukhe`: the `eukhe` command."""

from eukhe.cli.entry import main

if __name__ == "__main__":
    main()
