"""The faux model: a scripted provider for tests and the demo, in process and as a
real HTTP server on loopback (`eukhe faux serve`). The script is documented in
docs/faux.md."""

from eukhe.ai.faux.script import Script, ScriptError, Turn, load
from eukhe.ai.faux.server import FauxServer

__all__ = ["FauxServer", "Script", "ScriptError", "Turn", "load"]
