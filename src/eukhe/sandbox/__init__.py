"""The sandbox: bash and the Python kernel run under bubblewrap (`bwrap`), and which commands a call runs."""
