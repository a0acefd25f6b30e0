"""Every adapter is a `Provider`, the seam the loop is typed against; the ones that answer
in the background are `Deferred` ones too."""

from __future__ import annotations

from eukhe.ai.anthropic import AnthropicMessages
from eukhe.ai.faux.model import FauxModel
from eukhe.ai.faux.script import parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.openai_responses import OpenAIResponses
from eukhe.ai.provider import Deferred, Provider


def test_every_adapter_is_a_provider_and_the_background_ones_deferred() -> None:
    chat = OpenAIChat("p", base_url="http://127.0.0.1:9/v1")
    responses = OpenAIResponses("p", base_url="http://127.0.0.1:9/v1")
    anthropic = AnthropicMessages("p", base_url="http://127.0.0.1:9")
    faux = FauxModel(parse(["hi"]))
    for p in (chat, responses, anthropic, faux):
        assert isinstance(p, Provider), p
    assert isinstance(responses, Deferred) and isinstance(faux, Deferred)
    assert not isinstance(chat, Deferred) and not isinstance(anthropic, Deferred)
