"""Tests for the leaked-tool-call scanner (spec H4.8 rule 3).

Real-world cases are noted by project and file; the markup was rewritten for these tests, not copied.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eukhe.run.leak import Call, Leak, Scan, scan

OBJ: dict[str, Any] = {"type": "object"}

TOOLS: dict[str, dict[str, Any]] = {
    "read_file": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}},
    "bash": {"type": "object", "properties": {"command": {"type": "string"}}},
    "get_weather": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "state": {"type": "string"},
            "unit": {"type": "string"},
            "location": {"type": "string"},
            "units": {"type": "string"},
            "date": {"type": "string"},
        },
    },
    "get_current_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "state": {"type": "string"}, "unit": {"type": "string"}},
    },
    "calculate_area": {
        "type": "object",
        "properties": {"shape": {"type": "string"}, "dimensions": OBJ, "precision": {"type": "integer"}},
    },
    "search_hotels": {
        "type": "object",
        "properties": {"location": {"type": "string"}, "check_in": {"type": "string"}},
    },
    "final_answer": {"type": "object", "properties": {"trigger": {"type": "boolean"}}},
    "get_db_config": {"type": "object", "properties": {"param": {"type": "string"}}},
    "foo": {"type": "object", "properties": {"x": {"type": "integer"}}},
    "bar": {"type": "object", "properties": {"y": {"type": "integer"}}},
    "get_time": {"type": "object", "properties": {}},
    "typed": {
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "verbose": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": OBJ,
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "label": {"type": "string"},
        },
    },
}

# DeepSeek special tokens (fullwidth bars, ▁ separators).
D_BEGIN, D_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
D_CALL, D_SEP, D_CALL_END = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
# Kimi K2 section tokens.
K_BEGIN, K_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
K_CALL, K_ARG, K_CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"


def hermes(name: str, args: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def qwen3(name: str, args: dict[str, str]) -> str:
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def qwen_xml(*calls: tuple[str, dict[str, str]]) -> str:
    elements = "".join("<" + n + "".join(f' {k}="{v}"' for k, v in a.items()) + "/>" for n, a in calls)
    return f"<tool_calls>{elements}</tool_calls>"


def kimi(*calls: tuple[str, dict[str, Any]]) -> str:
    inner = "".join(
        f"{K_CALL}functions.{n}:{i}{K_ARG}{json.dumps(a)}{K_CALL_END}" for i, (n, a) in enumerate(calls)
    )
    return K_BEGIN + inner + K_END


def deepseek_v3(*calls: tuple[str, dict[str, Any]]) -> str:
    inner = "".join(
        f"{D_CALL}function{D_SEP}{n}\n```json\n{json.dumps(a)}\n```{D_CALL_END}" for n, a in calls
    )
    return D_BEGIN + inner + D_END


def deepseek_v31(*calls: tuple[str, dict[str, Any]]) -> str:
    return D_BEGIN + "".join(f"{D_CALL}{n}{D_SEP}{json.dumps(a)}{D_CALL_END}" for n, a in calls) + D_END


def dsml(*calls: tuple[str, dict[str, str]], string: str = "true") -> str:
    invokes = "".join(
        f'<｜DSML｜invoke name="{n}">\n'
        + "".join(
            f'<｜DSML｜parameter name="{k}" string="{string}">{v}</｜DSML｜parameter>\n' for k, v in a.items()
        )
        + "</｜DSML｜invoke>\n"
        for n, a in calls
    )
    return f"<｜DSML｜function_calls>\n{invokes}</｜DSML｜function_calls>"


def ok(result: Scan, *calls: Call, text: str | None = None) -> None:
    assert result.leak is None, result.leak
    assert result.calls == calls
    if text is not None:
        assert result.text == text


def leak(result: Scan, original: str, markup: str, *words: str) -> Leak:
    assert result.calls == ()
    assert result.leak is not None
    assert result.leak.markup == markup
    for word in words:
        assert word in result.leak.reason, result.leak.reason
    assert result.text == original
    return result.leak


# One well-formed call to read_file(path="a.txt") per family.
SINGLE = {
    "hermes": hermes("read_file", {"path": "a.txt"}),
    "qwen3": qwen3("read_file", {"path": "a.txt"}),
    "qwen-xml": qwen_xml(("read_file", {"path": "a.txt"})),
    "kimi": kimi(("read_file", {"path": "a.txt"})),
    "dsml": deepseek_v3(("read_file", {"path": "a.txt"})),
    "dsml-v31": deepseek_v31(("read_file", {"path": "a.txt"})),
    "dsml-tags": dsml(("read_file", {"path": "a.txt"})),
}
FAMILY = {key: key.split("-v31")[0].split("-tags")[0] for key in SINGLE}
READ = Call("read_file", {"path": "a.txt"})


# --- no markup -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["", "Just an answer.", "  spaced \n\n text  ", "a < b and c > d", "<b>bold</b>"]
)
def test_no_markup_leaves_text_alone(text: str) -> None:
    assert scan(text, TOOLS) == Scan((), None, text)


# --- every family: single call, text around it, fences and inline code ---------------------------------


@pytest.mark.parametrize("key", list(SINGLE))
def test_single_call(key: str) -> None:
    ok(scan(SINGLE[key], TOOLS), READ, text="")


@pytest.mark.parametrize("key", list(SINGLE))
def test_text_before_and_after_is_kept(key: str) -> None:
    result = scan("I will read it.\n" + SINGLE[key] + "\nThen I answer.", TOOLS)
    ok(result, READ, text="I will read it.\nThen I answer.")


@pytest.mark.parametrize("key", list(SINGLE))
def test_inline_text_around_markup_collapses_to_one_space(key: str) -> None:
    ok(scan("Before " + SINGLE[key] + " after", TOOLS), READ, text="Before after")


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
@pytest.mark.parametrize("key", list(SINGLE))
def test_markup_in_a_fence_is_quoted_not_called(key: str, fence: str) -> None:
    text = f"The model would print:\n{fence}text\n{SINGLE[key]}\n{fence}\nThat is all."
    assert scan(text, TOOLS) == Scan((), None, text)


@pytest.mark.parametrize("key", list(SINGLE))
def test_markup_in_an_unclosed_fence_is_quoted(key: str) -> None:
    text = "Example:\n```\n" + SINGLE[key]
    assert scan(text, TOOLS) == Scan((), None, text)


@pytest.mark.parametrize("ticks", ["`", "``"])
@pytest.mark.parametrize("key", list(SINGLE))
def test_markup_in_inline_code_is_quoted(key: str, ticks: str) -> None:
    text = f"Write {ticks}{SINGLE[key]}{ticks} to call a tool."
    assert scan(text, TOOLS) == Scan((), None, text)


def test_quoted_markup_beside_a_real_call() -> None:
    text = "The tag `<tool_call>` starts a call:\n" + hermes("bash", {"command": "ls"})
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}), text="The tag `<tool_call>` starts a call:")


def test_unmatched_backtick_does_not_hide_markup() -> None:
    text = "Don't type ` here.\n" + hermes("bash", {"command": "ls"})
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}), text="Don't type ` here.")


def test_inline_code_does_not_cross_a_blank_line() -> None:
    text = "a ` b\n\n" + hermes("bash", {"command": "ls"}) + "\n\nc ` d"
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}), text="a ` b\n\nc ` d")


def test_one_line_triple_backticks_are_inline_code() -> None:
    text = "```<tool_call>x</tool_call>```\n" + hermes("bash", {"command": "ls"})
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}), text="```<tool_call>x</tool_call>```")


def test_markup_after_a_closed_fence_is_a_call() -> None:
    text = "```python\nprint(1)\n```\n" + hermes("bash", {"command": "ls"})
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}), text="```python\nprint(1)\n```")


# --- every family: unoffered tool --------------------------------------------------------------------

UNOFFERED = {
    "hermes": hermes("grep", {"pattern": "x"}),
    "qwen3": qwen3("grep", {"pattern": "x"}),
    "qwen-xml": qwen_xml(("grep", {"pattern": "x"})),
    "kimi": kimi(("grep", {"pattern": "x"})),
    "dsml": deepseek_v3(("grep", {"pattern": "x"})),
    "dsml-v31": deepseek_v31(("grep", {"pattern": "x"})),
    "dsml-tags": dsml(("grep", {"pattern": "x"})),
}


@pytest.mark.parametrize("key", list(UNOFFERED))
def test_unoffered_tool_is_a_leak_naming_it(key: str) -> None:
    text = "Searching. " + UNOFFERED[key]
    found = leak(scan(text, TOOLS), text, FAMILY[key], "'grep'", "not offered")
    assert found.reason == "tool 'grep' is not offered"


@pytest.mark.parametrize("key", list(SINGLE))
def test_one_unoffered_call_among_good_ones_sinks_all(key: str) -> None:
    text = SINGLE[key] + "\n" + UNOFFERED[key]
    leak(scan(text, TOOLS), text, FAMILY[key], "'grep'")


def test_no_tools_offered_makes_every_call_a_leak() -> None:
    text = SINGLE["hermes"]
    leak(scan(text, {}), text, "hermes", "'read_file' is not offered")


# --- hermes ------------------------------------------------------------------------------------------


def test_hermes_several_calls_in_order() -> None:
    text = "Two things.\n" + hermes("read_file", {"path": "a"}) + "\n" + hermes("bash", {"command": "ls"})
    ok(
        scan(text, TOOLS),
        Call("read_file", {"path": "a"}),
        Call("bash", {"command": "ls"}),
        text="Two things.",
    )


def test_hermes_unclosed_final_block() -> None:
    # vLLM tests/tool_parsers/test_hermes_tool_parser.py: tool call until EOS, no </tool_call>.
    text = 'Done.\n<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}'
    ok(scan(text, TOOLS), Call("final_answer", {"trigger": True}), text="Done.")


def test_hermes_closed_then_unclosed() -> None:
    text = (
        hermes("bash", {"command": "ls"}) + '\n<tool_call>{"name": "bash", "arguments": {"command": "pwd"}}'
    )
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}), Call("bash", {"command": "pwd"}))


def test_hermes_invalid_json_is_a_leak_with_the_parse_error() -> None:
    # vLLM tests/tool_parsers/test_hermes_tool_parser.py: a missing closing brace.
    text = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}\n</tool_call>'
    found = leak(scan(text, TOOLS), text, "hermes", "the JSON of call 1 does not parse:", "character")
    assert "Expecting" in found.reason


def test_hermes_unclosed_invalid_json_is_a_leak() -> None:
    text = 'Ok <tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}'
    leak(scan(text, TOOLS), text, "hermes", "the JSON of call 1 does not parse")


def test_hermes_reason_names_delimiter_and_position() -> None:
    text = '<tool_call>{"name": "bash" "arguments": {}}</tool_call>'
    found = leak(scan(text, TOOLS), text, "hermes")
    assert found.reason == "the JSON of call 1 does not parse: Expecting ',' delimiter at character 16"


def test_hermes_second_call_failing_is_numbered() -> None:
    text = hermes("bash", {"command": "ls"}) + '<tool_call>{"name": "bash", </tool_call>'
    leak(scan(text, TOOLS), text, "hermes", "call 2")


def test_hermes_extra_text_before_the_close_leaks() -> None:
    text = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}}</tool_call>'
    leak(scan(text, TOOLS), text, "hermes", "call 1", "before </tool_call>")


def test_hermes_unterminated_string_reason_reads_well() -> None:
    text = '<tool_call>{"name": "bash", "arguments": {"command": "ls}}</tool_call>'
    found = leak(scan(text, TOOLS), text, "hermes")
    assert found.reason.startswith(
        "the JSON of call 1 does not parse: Unterminated string starting at character "
    )


def test_hermes_unclosed_block_then_prose_keeps_the_prose() -> None:
    text = 'Running.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\nI will wait.'
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}), text="Running.\nI will wait.")


def test_hermes_parameters_key_is_accepted() -> None:
    text = '<tool_call>{"name": "bash", "parameters": {"command": "ls"}}</tool_call>'
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}))


def test_hermes_arguments_as_a_json_string() -> None:
    # vLLM tests/tool_parsers/test_hermes_tool_parser.py: Granite 4 serialises "arguments" as a string.
    text = (
        '<tool_call>\n{"name": "get_db_config", '
        '"arguments": "{\\"param\\": \\"max_connections\\"}"}\n</tool_call>'
    )
    ok(scan(text, TOOLS), Call("get_db_config", {"param": "max_connections"}))


def test_hermes_arguments_that_are_not_an_object_leak() -> None:
    # vLLM tests/tool_parsers/test_hermes_tool_parser.py: "arguments": "hello" (a bare string).
    text = '<tool_call>\n{"name": "bash", "arguments": "hello"}\n</tool_call>'
    leak(scan(text, TOOLS), text, "hermes", "call 1")
    text = '<tool_call>{"name": "bash", "arguments": [1]}</tool_call>'
    leak(scan(text, TOOLS), text, "hermes", "not a JSON object")


def test_hermes_missing_arguments_means_none() -> None:
    ok(scan('<tool_call>{"name": "get_time"}</tool_call>', TOOLS), Call("get_time", {}))


def test_hermes_missing_name_leaks() -> None:
    text = '<tool_call>{"arguments": {}}</tool_call>'
    leak(scan(text, TOOLS), text, "hermes", "names no tool")


def test_hermes_keeps_json_types_as_given() -> None:
    text = hermes("typed", {"count": "3", "verbose": 1, "tags": "a,b"})
    ok(scan(text, TOOLS), Call("typed", {"count": "3", "verbose": 1, "tags": "a,b"}))


def test_hermes_unknown_parameters_are_kept() -> None:
    ok(
        scan(hermes("bash", {"command": "ls", "extra": [1]}), TOOLS),
        Call("bash", {"command": "ls", "extra": [1]}),
    )


def test_hermes_multiline_json_and_angle_brackets_in_strings() -> None:
    # vLLM tests/tool_parsers/test_hermes_tool_parser.py: JSON split over lines inside the block.
    text = (
        '<tool_call>\n{"name": "bash",\n"arguments": {"command":\n"echo \'<tool_call>\' > f"}}\n</tool_call>'
    )
    ok(scan(text, TOOLS), Call("bash", {"command": "echo '<tool_call>' > f"}))


def test_hermes_json_fenced_inside_the_block() -> None:
    text = '<tool_call>\n```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```\n</tool_call>'
    ok(scan(text, TOOLS), Call("bash", {"command": "ls"}))


def test_hermes_real_reply_with_prose_before() -> None:
    # vLLM tests/tool_parsers/test_hermes_tool_parser.py: content then a call, no newline between.
    text = (
        "Sure, let me check the weather."
        '<tool_call>{"name": "get_weather", "arguments": {"city": "NYC"}}</tool_call>'
    )
    ok(scan(text, TOOLS), Call("get_weather", {"city": "NYC"}), text="Sure, let me check the weather.")


def test_hermes_two_blocks_back_to_back() -> None:
    # vLLM tests/tool_parsers/test_hermes_tool_parser.py: parallel "search" calls with no space between.
    tools = {"search": {"type": "object", "properties": {"q": {"type": "string"}}}}
    text = (
        '<tool_call>{"name": "search", "arguments": {"q": "cats"}}</tool_call>'
        '<tool_call>{"name": "search", "arguments": {"q": "dogs"}}</tool_call>'
    )
    ok(scan(text, tools), Call("search", {"q": "cats"}), Call("search", {"q": "dogs"}), text="")


def test_hermes_bare_tag_in_prose_is_a_leak() -> None:
    text = "I would emit <tool_call> here."
    leak(scan(text, TOOLS), text, "hermes", "does not parse")


# --- qwen3 -------------------------------------------------------------------------------------------


def test_qwen3_real_single_call() -> None:
    # vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py: get_current_weather for Dallas, TX.
    text = (
        "Sure! Let me check the weather for you.<tool_call>\n<function=get_current_weather>\n"
        "<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n"
        "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>"
    )
    ok(
        scan(text, TOOLS),
        Call("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}),
        text="Sure! Let me check the weather for you.",
    )


def test_qwen3_real_parallel_calls() -> None:
    # vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py: Dallas then Orlando.
    text = (
        qwen3("get_current_weather", {"city": "Dallas", "state": "TX"})
        + "\n"
        + qwen3("get_current_weather", {"city": "Orlando", "state": "FL"})
    )
    ok(
        scan(text, TOOLS),
        Call("get_current_weather", {"city": "Dallas", "state": "TX"}),
        Call("get_current_weather", {"city": "Orlando", "state": "FL"}),
    )


def test_qwen3_real_object_and_integer_params() -> None:
    # vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py: calculate_area with a multi-line object.
    text = (
        "<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n"
        '<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n'
        "<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>"
    )
    ok(
        scan(text, TOOLS),
        Call(
            "calculate_area",
            {"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2},
        ),
    )


def test_qwen3_without_the_tool_call_wrapper() -> None:
    # vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py: fallback when <tool_call> is missing.
    text = "<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>"
    ok(scan(text, TOOLS), Call("get_current_weather", {"city": "Dallas"}))


def test_qwen3_multiline_value_keeps_inner_lines() -> None:
    code = "def f():\n    return 1\n\n"
    text = qwen3("bash", {"command": code})
    ok(scan(text, TOOLS), Call("bash", {"command": code}))


def test_qwen3_value_may_hold_markup_like_text() -> None:
    text = qwen3("bash", {"command": "echo '</function>' && cat <<EOF\n<tool_call>\nEOF"})
    ok(scan(text, TOOLS), Call("bash", {"command": "echo '</function>' && cat <<EOF\n<tool_call>\nEOF"}))


def test_qwen3_unclosed_at_end_of_text() -> None:
    text = "Reading.\n<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n"
    ok(scan(text, TOOLS), READ, text="Reading.")


def test_qwen3_truncated_inside_a_value() -> None:
    text = "<tool_call>\n<function=bash>\n<parameter=command>\nls -la\n"
    ok(scan(text, TOOLS), Call("bash", {"command": "ls -la"}))


def test_qwen3_missing_parameter_close_before_next_parameter() -> None:
    text = "<function=read_file>\n<parameter=path>\na.txt\n<parameter=limit>\n5\n</parameter>\n</function>"
    ok(scan(text, TOOLS), Call("read_file", {"path": "a.txt", "limit": 5}))


def test_qwen3_typed_parameters() -> None:
    text = qwen3(
        "typed",
        {
            "count": "42",
            "ratio": "3.5",
            "verbose": "true",
            "tags": '["a", "b"]',
            "meta": '{"k": 1}',
            "maybe": "null",
            "label": "007",
            "other": "12",
        },
    )
    ok(
        scan(text, TOOLS),
        Call(
            "typed",
            {
                "count": 42,
                "ratio": 3.5,
                "verbose": True,
                "tags": ["a", "b"],
                "meta": {"k": 1},
                "maybe": None,
                "label": "007",
                "other": "12",  # unknown parameters stay strings
            },
        ),
    )


def test_qwen3_python_ish_values() -> None:
    text = qwen3("typed", {"verbose": "False", "tags": "['a', 'b']", "meta": "{'k': True}"})
    ok(scan(text, TOOLS), Call("typed", {"verbose": False, "tags": ["a", "b"], "meta": {"k": True}}))


@pytest.mark.parametrize(
    ("key", "value", "kind"),
    [
        ("count", "ten", "integer"),
        ("count", "4.5", "integer"),
        ("verbose", "yes", "boolean"),
        ("tags", '["a", ', "array"),
        ("tags", '{"a": 1}', "array"),
        ("meta", '{"k": 1', "object"),
        ("ratio", "fast", "number"),
        ("maybe", "many", "integer or null"),
    ],
)
def test_qwen3_value_not_of_its_schema_type_leaks(key: str, value: str, kind: str) -> None:
    text = "Let me try.\n" + qwen3("typed", {key: value})
    found = leak(scan(text, TOOLS), text, "qwen3", repr(key), "call 1", kind)
    assert value[:5] in found.reason


def test_qwen3_stray_text_inside_function_leaks() -> None:
    text = "<tool_call>\n<function=bash>\nls\n</function>\n</tool_call>"
    leak(scan(text, TOOLS), text, "qwen3", "call 1")


# --- qwen-xml ----------------------------------------------------------------------------------------


def test_qwen_xml_several_calls() -> None:
    text = "Two.\n" + qwen_xml(("read_file", {"path": "a.txt"}), ("bash", {"command": "ls -l"})) + "\nDone."
    ok(scan(text, TOOLS), READ, Call("bash", {"command": "ls -l"}), text="Two.\nDone.")


def test_qwen_xml_multi_line_layout_and_single_quotes() -> None:
    text = "<tool_calls>\n  <read_file path='a.txt'/>\n  <bash command=\"ls\" />\n</tool_calls>"
    ok(scan(text, TOOLS), READ, Call("bash", {"command": "ls"}))


def test_qwen_xml_entities_in_attributes() -> None:
    text = '<tool_calls><bash command="echo &quot;hi&quot; &amp;&amp; a &lt; b"/></tool_calls>'
    ok(scan(text, TOOLS), Call("bash", {"command": 'echo "hi" && a < b'}))


def test_qwen_xml_child_elements() -> None:
    text = "<tool_calls><bash>\n<command>\nprintf 'a\\nb'\n</command>\n</bash></tool_calls>"
    ok(scan(text, TOOLS), Call("bash", {"command": "printf 'a\\nb'"}))


def test_qwen_xml_unclosed_at_end_of_text() -> None:
    ok(scan('Going.\n<tool_calls>\n<read_file path="a.txt"/>\n', TOOLS), READ, text="Going.")


def test_qwen_xml_typed_attributes() -> None:
    text = qwen_xml(
        ("typed", {"count": "7", "verbose": "True", "tags": "[1, 2]", "meta": "{}", "label": "x"})
    )
    ok(
        scan(text, TOOLS),
        Call("typed", {"count": 7, "verbose": True, "tags": [1, 2], "meta": {}, "label": "x"}),
    )


def test_qwen_xml_bad_typed_attribute_leaks() -> None:
    text = qwen_xml(("read_file", {"path": "a", "limit": "all"}))
    leak(scan(text, TOOLS), text, "qwen-xml", "'limit'", "integer")


def test_qwen_xml_invalid_json_attribute_leaks() -> None:
    text = "<tool_calls><typed meta='{\"k\": }'/></tool_calls>"
    leak(scan(text, TOOLS), text, "qwen-xml", "'meta'", "object")


def test_qwen_xml_empty_or_junk_leaks() -> None:
    text = "<tool_calls></tool_calls>"
    leak(scan(text, TOOLS), text, "qwen-xml", "no call")
    text = "<tool_calls>read_file a.txt</tool_calls>"
    leak(scan(text, TOOLS), text, "qwen-xml", "call 1")


# --- kimi --------------------------------------------------------------------------------------------


def test_kimi_real_reply_with_text_around() -> None:
    # sglang sgl-router tests (Rust) kimik2 complete parsing: prose, a section on its own lines, prose.
    text = (
        "Let me help you with that.\n<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"location": "Tokyo", "units": "celsius"}<|tool_call_end|>\n'
        "<|tool_calls_section_end|>\nThe weather in Tokyo is..."
    )
    ok(
        scan(text, TOOLS),
        Call("get_weather", {"location": "Tokyo", "units": "celsius"}),
        text="Let me help you with that.\nThe weather in Tokyo is...",
    )


def test_kimi_multi_line_layout() -> None:
    # ik_llama.cpp examples/server/function_calls.md: tokens each on their own line.
    text = (
        "<|tool_calls_section_begin|>\n<|tool_call_begin|>\nfunctions.get_weather:0<|tool_call_argument_begin|>\n"
        '{"location": "Tokyo"}\n<|tool_call_end|>\n<|tool_calls_section_end|>'
    )
    ok(scan(text, TOOLS), Call("get_weather", {"location": "Tokyo"}))


def test_kimi_several_calls_and_id_forms() -> None:
    # vLLM tests/tool_parsers/test_kimi_k2_tool_parser.py: parallel calls; an id without "functions.".
    text = "Compare weather. " + K_BEGIN
    text += f'{K_CALL}functions.get_weather:0 {K_ARG}{{"city": "Beijing"}}{K_CALL_END}'
    text += f'{K_CALL}get_weather:1 {K_ARG}{{"city": "Shanghai"}}{K_CALL_END}' + K_END
    ok(
        scan(text, TOOLS),
        Call("get_weather", {"city": "Beijing"}),
        Call("get_weather", {"city": "Shanghai"}),
        text="Compare weather.",
    )


def test_kimi_real_multiline_json_and_empty_arguments() -> None:
    # vLLM tests/tool_parsers/test_kimi_k2_tool_parser.py: pretty-printed JSON; "{}" arguments.
    text = (
        kimi(("get_time", {}))
        + "\n"
        + K_BEGIN
        + f'{K_CALL}functions.read_file:1{K_ARG}{{\n  "path": "a.txt"\n}}'
    )
    text += K_CALL_END + K_END
    ok(scan(text, TOOLS), Call("get_time", {}), READ)


def test_kimi_unclosed_section_at_end_of_text() -> None:
    text = "Checking. " + K_BEGIN + f'{K_CALL}functions.read_file:0{K_ARG}{{"path": "a.txt"}}'
    ok(scan(text, TOOLS), READ, text="Checking.")


def test_kimi_invalid_json_leaks() -> None:
    # vLLM tests/tool_parsers/test_kimi_k2_tool_parser.py: '{"city": "Beijing"' beside a good call.
    text = "Help. " + K_BEGIN
    text += f'{K_CALL}functions.get_weather:0{K_ARG}{{"city": "Beijing"{K_CALL_END}'
    text += f'{K_CALL}functions.get_weather:1{K_ARG}{{"city": "Shanghai"}}{K_CALL_END}' + K_END
    leak(scan(text, TOOLS), text, "kimi", "the JSON of call 1 does not parse")


def test_kimi_bare_counter_id_is_not_a_tool() -> None:
    # vLLM tests/tool_parsers/test_kimi_k2_tool_parser.py: a bare "0" id; we do not guess the tool.
    text = K_BEGIN + f'{K_CALL}0 {K_ARG}{{"city": "Tokyo"}}{K_CALL_END}' + K_END
    leak(scan(text, TOOLS), text, "kimi", "'0' is not offered")


def test_kimi_keeps_json_types() -> None:
    ok(scan(kimi(("typed", {"count": 2, "tags": ["x"]})), TOOLS), Call("typed", {"count": 2, "tags": ["x"]}))


def test_kimi_section_without_calls_leaks() -> None:
    text = "Hmm " + K_BEGIN + "functions.read_file:0" + K_END
    leak(scan(text, TOOLS), text, "kimi")


# --- dsml (DeepSeek) -------------------------------------------------------------------------------


def test_deepseek_v3_real_parallel_calls() -> None:
    # vLLM tests/tool_parsers/test_deepseekv3_tool_parser.py: get_weather then search_hotels, fenced JSON.
    text = deepseek_v3(
        ("get_weather", {"city": "Tokyo", "unit": "celsius"}),
        ("search_hotels", {"location": "Tokyo", "check_in": "2025-01-15"}),
    )
    ok(
        scan(text, TOOLS),
        Call("get_weather", {"city": "Tokyo", "unit": "celsius"}),
        Call("search_hotels", {"location": "Tokyo", "check_in": "2025-01-15"}),
    )


def test_deepseek_v3_real_surrounding_text() -> None:
    # vLLM tests/tool_parsers/test_deepseekv3_tool_parser.py: prose glued to the section.
    text = "Let me check the weather for you." + deepseek_v3(("get_weather", {"city": "Paris"}))
    ok(scan(text, TOOLS), Call("get_weather", {"city": "Paris"}), text="Let me check the weather for you.")


def test_deepseek_v3_real_malformed_json_leaks() -> None:
    # vLLM tests/tool_parsers/test_deepseekv3_tool_parser.py: '{"city": "Tokyo"' without its brace.
    text = f'{D_BEGIN}{D_CALL}function{D_SEP}get_weather\n```json\n{{"city": "Tokyo"\n```{D_CALL_END}{D_END}'
    leak(scan(text, TOOLS), text, "dsml", "the JSON of call 1 does not parse")


def test_deepseek_v3_real_missing_call_tokens_leaks() -> None:
    # vLLM tests/tool_parsers/test_deepseekv3_tool_parser.py: section tokens without call tokens.
    text = f'{D_BEGIN}function{D_SEP}get_weather\n```json\n{{"city": "Tokyo"}}\n```{D_END}'
    leak(scan(text, TOOLS), text, "dsml", "call 1")


def test_deepseek_v31_real_cases() -> None:
    # vLLM tests/tool_parsers/test_deepseekv31_tool_parser.py: foo {"x":1}, bar {"y":2}, prefix and suffix.
    text = (
        f'some prefix text{D_BEGIN}{D_CALL}foo{D_SEP}{{"x":1}}{D_CALL_END}'
        f'{D_CALL}bar{D_SEP}{{"y":2}}{D_CALL_END}{D_END} some suffix text'
    )
    ok(
        scan(text, TOOLS),
        Call("foo", {"x": 1}),
        Call("bar", {"y": 2}),
        text="some prefix text some suffix text",
    )


@pytest.mark.parametrize(
    "text",
    [
        # vLLM tests/tool_parsers/test_deepseekv31_tool_parser.py: cut off; start token, no call markers.
        f"Let me look that up.{D_BEGIN}get_weather",
        f'{D_BEGIN}foo{D_SEP}{{"x":1}}{D_END}',
    ],
)
def test_deepseek_v31_real_unparsable_sections_leak(text: str) -> None:
    leak(scan(text, TOOLS), text, "dsml")


def test_deepseek_unclosed_at_end_of_text() -> None:
    text = f'Reading.{D_BEGIN}{D_CALL}read_file{D_SEP}{{"path": "a.txt"}}'
    ok(scan(text, TOOLS), READ, text="Reading.")


def test_deepseek_ascii_bars_and_underscores() -> None:
    text = (
        '<|tool_calls_begin|><|tool_call_begin|>read_file<|tool_sep|>{"path": "a.txt"}'
        "<|tool_call_end|><|tool_calls_end|>"
    )
    ok(scan(text, TOOLS), READ)


def test_deepseek_invalid_json_leaks() -> None:
    text = deepseek_v31(("read_file", {"path": "a"})).replace('"a"}', '"a",}')
    leak(scan(text, TOOLS), text, "dsml", "does not parse")


def test_dsml_real_cases() -> None:
    # vLLM tests/tool_parsers/test_deepseekv32_tool_parser.py: no-parameter call, two get_weather calls.
    text = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_time">\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    ok(scan(text, TOOLS), Call("get_time", {}))
    text = "Sure, let me check! " + dsml(
        ("get_weather", {"location": "SF"}), ("get_weather", {"location": "NYC"})
    )
    ok(
        scan(text, TOOLS),
        Call("get_weather", {"location": "SF"}),
        Call("get_weather", {"location": "NYC"}),
        text="Sure, let me check!",
    )


def test_dsml_typed_string_false_parameters() -> None:
    # vLLM tests/tool_parsers/test_deepseekv32_tool_parser.py: string="false" values typed by schema.
    text = dsml(
        (
            "typed",
            {"verbose": "true", "count": "42", "ratio": "3.14", "tags": '["a", "b"]', "meta": '{"k": 1}'},
        ),
        string="false",
    )
    ok(
        scan(text, TOOLS),
        Call("typed", {"verbose": True, "count": 42, "ratio": 3.14, "tags": ["a", "b"], "meta": {"k": 1}}),
    )


def test_dsml_string_true_is_kept_as_given() -> None:
    text = dsml(("typed", {"label": "42", "extra": "[1]"}))
    ok(scan(text, TOOLS), Call("typed", {"label": "42", "extra": "[1]"}))


def test_dsml_unknown_string_false_parameter_is_json_as_given() -> None:
    text = dsml(("typed", {"extra": "[1, 2]", "note": "plain words"}), string="false")
    ok(scan(text, TOOLS), Call("typed", {"extra": [1, 2], "note": "plain words"}))


def test_dsml_bad_typed_parameter_leaks() -> None:
    text = dsml(("typed", {"meta": '{"k": '}), string="false")
    leak(scan(text, TOOLS), text, "dsml", "'meta'", "object")


def test_dsml_ascii_bars_and_unclosed() -> None:
    text = (
        'Ok.\n<|DSML|function_calls>\n<|DSML|invoke name="read_file">\n'
        '<|DSML|parameter name="path" string="true">a.txt'
    )
    ok(scan(text, TOOLS), READ, text="Ok.")


def test_dsml_empty_section_leaks() -> None:
    text = "<｜DSML｜function_calls>\n</｜DSML｜function_calls>"
    leak(scan(text, TOOLS), text, "dsml", "no call")


# --- mixed -------------------------------------------------------------------------------------------


def test_families_mix_in_text_order() -> None:
    text = "a\n" + SINGLE["kimi"] + "\nb\n" + hermes("bash", {"command": "ls"}) + "\nc"
    ok(scan(text, TOOLS), READ, Call("bash", {"command": "ls"}), text="a\nb\nc")


def test_first_failing_section_names_the_markup() -> None:
    text = SINGLE["hermes"] + "\n" + UNOFFERED["kimi"] + "\n" + UNOFFERED["qwen3"]
    leak(scan(text, TOOLS), text, "kimi", "'grep'")


def test_blank_lines_around_markup_collapse_to_one() -> None:
    text = "Para one.\n\n\n" + SINGLE["hermes"] + "\n\n\n\nPara two."
    ok(scan(text, TOOLS), READ, text="Para one.\n\nPara two.")


def test_results_are_frozen() -> None:
    result = scan(SINGLE["hermes"], TOOLS)
    with pytest.raises(AttributeError):
        result.text = "x"  # type: ignore[misc]


# --- totality ----------------------------------------------------------------------------------------

PIECES = [
    *SINGLE.values(),
    *UNOFFERED.values(),
    "<tool_call>",
    "</tool_call>",
    "<tool_calls>",
    "</tool_calls>",
    "<function=",
    "<function=bash>",
    "</function>",
    "<parameter=command>",
    "</parameter>",
    K_BEGIN,
    K_END,
    K_CALL,
    K_ARG,
    K_CALL_END,
    D_BEGIN,
    D_END,
    D_CALL,
    D_SEP,
    D_CALL_END,
    "<|tool_sep|>",
    "<｜DSML｜function_calls>",
    '<｜DSML｜invoke name="bash">',
    '<｜DSML｜parameter name="command" string="false">',
    "</｜DSML｜parameter>",
    "```",
    "~~~",
    "`",
    "\n",
    "\n\n",
    " ",
    "{",
    "}",
    '"',
    "[",
    "]",
    ":",
    ",",
    "<",
    ">",
    "/>",
    "é",
    "\x00",
    "\U0001f600",
    "functions.bash:0",
    '{"name": "bash", "arguments": {"command": "ls"}}',
]


def _check_total(text: str) -> None:
    result = scan(text, TOOLS)
    assert isinstance(result, Scan)
    if result.leak is not None or not result.calls:
        assert result.calls == ()
    if result.leak is not None:
        assert result.leak.markup in {"hermes", "qwen3", "qwen-xml", "kimi", "dsml"}
        assert result.text == text
    for call in result.calls:
        assert call.name in TOOLS
        assert isinstance(call.arguments, dict)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=30))
def test_scan_is_total_on_markup_soup(parts: list[str]) -> None:
    _check_total("".join(parts))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_scan_is_total_on_random_text(text: str) -> None:
    _check_total(text)


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>" + "[" * 100_000,
        "<tool_call>" + '{"a":' * 50_000,
        qwen3("typed", {"tags": "[" * 100_000}),
        qwen3("typed", {"meta": "{" * 5_000}),
        "`" * 10_000 + "<tool_call>",
        "` `` ``` " * 5_000,
        "<tool_calls>" + "<a " * 20_000,
        "<tool_calls><" + "a" * 100_000,
        K_BEGIN + K_CALL * 20_000,
        "<function=x>" + "<parameter=a>" * 20_000,
        "```\n" * 20_000 + SINGLE["hermes"],
        (SINGLE["qwen3"] + "\n") * 2_000,
    ],
    ids=lambda t: repr(t[:20]),
)
def test_scan_is_total_on_huge_and_nested_input(text: str) -> None:
    _check_total(text)


def test_many_calls_stay_fast() -> None:
    text = "\n".join([SINGLE["hermes"], SINGLE["qwen3"], SINGLE["kimi"], SINGLE["dsml"]] * 500)
    result = scan(text, TOOLS)
    assert result.leak is None
    assert len(result.calls) == 2_000


BROKEN_HERMES = [
    '<tool_call>{"name": "bash", "arguments": {"command": "ls"}</tool_call>',  # a brace short
    '<tool_call>{"name": "bash" "arguments": {}}</tool_call>',  # a comma short
    '<tool_call>\n{"arguments": {"command": "ls"}}\n</tool_call>',  # no name
    '<tool_call>{"name": "bash", "arguments": [1, 2]}</tool_call>',  # arguments not an object
    '<tool_call>{"name": "nope", "arguments": {}}</tool_call>',  # a tool not offered
    '<tool_call>{"name": "bash", "arguments": {"command": "ls"}} trailing</tool_call>',  # text after the JSON
    "<tool_call>\n{'name': 'bash', 'arguments': {}}\n</tool_call>",  # not JSON at all
]


@pytest.mark.parametrize("text", BROKEN_HERMES)
def test_broken_hermes_calls(text: str) -> None:
    """A Hermes block that does not rebuild into a call of an offered tool is a leak
    with its reason, runs nothing, and leaves no call behind."""
    found = scan(text, TOOLS)
    assert not found.calls
    assert found.leak is not None and found.leak.markup == "hermes" and found.leak.reason
