"""The memory's prompts keep the promises a rule depends on."""

from __future__ import annotations

from eukhe.memory import prompts
from eukhe.rules.compactor import NODE, nbytes


def test_the_scale_line_is_exactly_node_bytes() -> None:
    assert nbytes(prompts.SCALE) == NODE
    assert f"this line is exactly {NODE} bytes:\n{prompts.SCALE}\n" in prompts.compress_step("user: hi")


def test_the_follow_up_shows_the_cut_at_a_character_boundary() -> None:
    line = "a" * 511 + "é" + "b" * 9  # the limit falls inside the é
    assert prompts.too_long(line) == (
        f"That line has 522 bytes, over the limit of {NODE}. Write it again so that it ends no later than "
        f"where this cut is marked:\n{'a' * 511}| <- the limit"
    )


def test_a_merge_shows_both_lines_flat_and_a_message_whole() -> None:
    assert prompts.merge_step("a\nb", "c\r\nd").endswith(f"one line of at most {NODE} bytes:\na b\nc d")
    assert prompts.compress_step("user: x\ny").endswith(f"one line of at most {NODE} bytes:\nuser: x\ny")
