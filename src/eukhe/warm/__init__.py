"""The home's warm template: `eukhe run`s forked with their imports done (`__main__.py`, the
template's process), and the client that hands a run to it (`handoff.py`)."""
