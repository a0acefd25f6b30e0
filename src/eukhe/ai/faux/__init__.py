"""The faux model: a scripted provider for tests and the demo, in process and as a
real HTTP server on loopback (`eukhe faux serve`). The script is documented in
docs/faux.md."""

from eukhe.ai.faux.model import FauxModel
from eukhe.ai.faux.script import Script, ScriptError, Turn, load, parse
from eukhe.ai.faux.server import FauxServer

__all__ = ["FauxModel", "FauxServer", "Script", "ScriptError", "Turn", "load", "parse"]
