"""The interactive agent (`eukhe` with no arguments) and the events it shares with
`eukhe run --events`. This module itself stays light: the command's first step
draws the prompt's mark with it before anything else is imported."""

PROMPT = "› "
"""The prompt's mark; tests and bench/startup.py wait for it as the sign that it is editable."""
