"""The editor face: eukhe as an Agent Client Protocol agent (`eukhe acp`)."""
