"""The endless chat: its log, tree of lines, view and compactor; imports of other agents' sessions."""
