"""The run: the generation loop that asks rules/run and rules/recovery at every decision."""
