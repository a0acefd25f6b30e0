"""The bash reader (`reader.py`): what a bash command runs, read from tree-sitter-bash's syntax
tree, for the permission gate (`run/permit.py`) to judge against the rules. It reads; the rule
(`rules/permission.py`) decides; the sandbox (`sandbox/`) confines what runs."""

from typing import TYPE_CHECKING

# Named, not loaded: tree-sitter loads with the reader, for the gate alone.
if TYPE_CHECKING:
    from eukhe.bash.reader import split

__all__ = [
    "split",
]
