"""The command line's three heavy halves, each loaded by the first command that needs
it. These are the command line's only imports made inside functions: without them
`eukhe --help` and the commands that run no work would wait a second or more for
libraries they never use.

- `stored`: the home's store (DBOS, SQLAlchemy), for runs, sessions, the chat and
  the store itself;
- `lawbook`: the laws and their engine (Hypothesis, CrossHair), for `eukhe laws`;
- `demo`: the faux model and a provider's SDK, for `eukhe demo` and `eukhe faux serve`;
- `mcp_check`: the MCP SDK, for `eukhe mcp list` and `eukhe mcp test`.

Each returns its module, whose names its callers use as they would an import's."""

from __future__ import annotations

from types import ModuleType


def stored() -> ModuleType:
    from eukhe.cli import stored as half

    return half


def lawbook() -> ModuleType:
    from eukhe.cli import lawbook as half

    return half


def demo() -> ModuleType:
    from eukhe.cli import demo as half

    return half


def mcp_check() -> ModuleType:
    from eukhe.mcp import check as half

    return half
