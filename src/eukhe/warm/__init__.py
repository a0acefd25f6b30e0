"""The home's warm template: `eukhe run`s forked with their imports done (`__main__.py`, the
template's process), and the client that hands a run to it (`client/handoff.py`). Nothing
here is for other packages: the template is a process of its own (`python -m eukhe.warm`)."""

__all__: list[str] = []
