"""The `eukhe` command."""
