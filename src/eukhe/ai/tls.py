"""The one TLS context a process's model clients verify servers with.

Building a context loads the CA bundle: about 30 ms of CPU. The SDKs built one for each
client, and a client is made for each run (and each compactor route), so every run paid
it, on loopback servers too. The context is built once for the CA bundle the environment
names, as the SDKs' own default would be (`httpx2.create_ssl_context`: the system's bundle,
or SSL_CERT_FILE or SSL_CERT_DIR when set), and never changed after. The warm template
builds it before it forks a run (`warm/__main__.py`): a run whose environment names the
same bundle takes it as it is, one that names another builds its own."""

from __future__ import annotations

import functools
import os
import ssl

import httpx2


def verified() -> ssl.SSLContext:
    """The verifying context for the CA bundle this process's environment names, built at
    its first use."""
    return _built(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _built(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    del cafile, capath  # the cache's key: httpx2 reads them from the environment itself
    return httpx2.create_ssl_context()
