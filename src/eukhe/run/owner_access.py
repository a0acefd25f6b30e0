"""What a face asks the home's owner itself, outside a run (`eukhe owner status`,
`shutdown` and `doctor`, the agent's /owner): one request and its answer, the owner's files,
whether its process lives. The owner's client and its wire stay behind this module, so the
faces never import them. Light: no store is loaded."""

from __future__ import annotations

from eukhe.client.client import OwnerError, alive, ask_once, read_info
from eukhe.client.protocol import RequestKind, UnsafeSocket, info_path, socket_folder, socket_path

__all__ = [
    "OwnerError",
    "RequestKind",
    "UnsafeSocket",
    "alive",
    "ask_once",
    "info_path",
    "read_info",
    "socket_folder",
    "socket_path",
]
