"""The home owner's client and its wire: what every process of the home uses to reach
the owner (its connection, the remote admission registry, the root-turn lease, the
remote chat)."""
