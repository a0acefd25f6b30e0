"""The home owner's client and its wire: what every process of the home uses to reach
the owner (its connection, the remote admission registry, the root-turn lease, the
remote chat)."""

from typing import TYPE_CHECKING

# Named, not loaded: each is imported from its module (`eukhe run`'s handoff to the warm template is
# light and loads nothing else).
if TYPE_CHECKING:
    from eukhe.client import protocol
    from eukhe.client.admission import RemoteRegistry
    from eukhe.client.client import Client, OwnerError, alive, ask_once, read_info
    from eukhe.client.handoff import hand_off, identity, limits
    from eukhe.client.lease import LeaseStopped, RootTurnLease
    from eukhe.client.protocol import RequestKind, UnsafeSocket, info_path, socket_folder, socket_path
    from eukhe.client.remote_chat import Remote, batches

__all__ = [
    "Client",
    "LeaseStopped",
    "OwnerError",
    "Remote",
    "RemoteRegistry",
    "RequestKind",
    "RootTurnLease",
    "UnsafeSocket",
    "alive",
    "ask_once",
    "batches",
    "hand_off",
    "identity",
    "info_path",
    "limits",
    "protocol",
    "read_info",
    "socket_folder",
    "socket_path",
]
