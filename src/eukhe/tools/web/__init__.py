"""The web tools: `web_fetch` (`tools.web.fetch`), which reads a URL within bounds and converts
what it got (`tools.web.convert`)."""

from eukhe.tools.web.fetch import WEB_FETCH, WebFetch

__all__ = ["WEB_FETCH", "WebFetch"]
