"""settings.json: the user's (`$EUKHE_HOME`, default `~/.eukhe`) deep-merged with the
project's (`.eukhe/settings.json`); a malformed file is a clear error naming the file
and the place, and is never rewritten."""

from eukhe.settings.load import SettingsError, home, load, run_settings, value

__all__ = ["SettingsError", "home", "load", "run_settings", "value"]
