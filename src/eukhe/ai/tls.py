"""The one TLS context a process's model clients verify servers with.

Building a context loads the CA bundle: about 30 ms of CPU. The SDKs built one for each
client, and a client is made for each run (and each compactor route), so every run paid
it, on loopback servers too. The context is built once, as the SDKs' own default would be
(`httpx2.create_ssl_context`: the CA bundle, and SSL_CERT_FILE or SSL_CERT_DIR when set),
and never changed after."""

from __future__ import annotations

import functools
import ssl

import httpx2


@functools.cache
def verified() -> ssl.SSLContext:
    """The verifying context, built at its first use."""
    return httpx2.create_ssl_context()
