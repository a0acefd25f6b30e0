"""Images attached to a prompt: `--image`, `@shot.png` and a pasted path; the header parser
against files a real encoder (Pillow) wrote; the image as each adapter sends it; stored once in
the store's image table and never in a step; a model that takes none refused before any request."""

from __future__ import annotations

import base64
import io
import os
import sqlite3
from pathlib import Path

import pytest
from PIL import Image as Pil

from eukhe.ai import anthropic, openai_chat, openai_responses
from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.image import MAX_BYTES, Image, ImageError, image_of, measure, takes_images
from eukhe.ai.request import Message, Request
from eukhe.run.images import read_image
from eukhe.run.mentions import attach
from eukhe.store import codec
from tests.proc import eukhe


def encoded(fmt: str, w: int, h: int, **kw: object) -> bytes:
    out = io.BytesIO()
    Pil.new("RGB", (w, h), (200, 30, 30)).save(out, fmt, **kw)
    return out.getvalue()


@pytest.mark.parametrize(
    ("fmt", "kw", "media"),
    [
        ("PNG", {}, "image/png"),
        ("JPEG", {}, "image/jpeg"),
        ("JPEG", {"progressive": True}, "image/jpeg"),
        ("GIF", {}, "image/gif"),
        ("WEBP", {}, "image/webp"),
        ("WEBP", {"lossless": True}, "image/webp"),
        ("WEBP", {"exif": b"Exif\x00\x00MM\x00*\x00\x00\x00\x08\x00\x00"}, "image/webp"),  # VP8X
    ],
)
@pytest.mark.parametrize(("w", "h"), [(1, 1), (3, 2), (640, 480), (1023, 17), (2049, 1031)])
def test_the_header_parser_reads_what_a_real_encoder_wrote(
    fmt: str, kw: dict[str, object], media: str, w: int, h: int
) -> None:
    assert measure(encoded(fmt, w, h, **kw)) == (media, w, h)


def test_what_is_not_an_image_is_a_clear_error(tmp_path: Path) -> None:
    png = encoded("PNG", 4, 4)
    for data, why in [
        (b"plain text, not an image", "not a PNG, JPEG, GIF or WebP image"),
        (png[:18], "its header is cut short"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "a JPEG without a frame header"),
        (b"RIFF\x00\x00\x00\x00WEBPVP9 xxxxxxxxxx", "not VP8, VP8L or VP8X"),
    ]:
        with pytest.raises(ImageError, match=why):
            measure(data, "x")
    with pytest.raises(ImageError, match="over the 5,242,880 an attached image may have"):
        image_of(png + b"\0" * MAX_BYTES, "big.png")
    with pytest.raises(ImageError, match="sides are 1 to 8000"):
        image_of(encoded("PNG", 8001, 1), "wide.png")


def test_a_fifo_named_as_an_image_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "shot.png")
    with pytest.raises(ImageError, match="a FIFO"):
        read_image("shot.png", tmp_path)


def test_a_mentioned_or_pasted_image_is_attached_as_an_image(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(encoded("PNG", 3, 2))
    (tmp_path / "my shots").mkdir()
    (tmp_path / "my shots" / "b.gif").write_bytes(encoded("GIF", 5, 5))
    (tmp_path / "bad.png").write_bytes(b"not png")
    typed = f"compare @shot.png with '{tmp_path}/my shots/b.gif' and @bad.png"
    got = attach(typed, tmp_path)
    assert [(i.name, i.width, i.height) for i in got.images] == [
        ("shot.png", 3, 2),
        (f"{tmp_path}/my shots/b.gif", 5, 5),
    ]
    assert got.prompt.endswith(f"[image: shot.png, 3x2]\n\n[image: {tmp_path}/my shots/b.gif, 5x5]")
    assert "not attached: bad.png: not a PNG, JPEG, GIF or WebP image" in got.said
    assert set(got.image_data) == {i.sha256 for i in got.images}


def test_a_templates_pasted_image_path_attaches_nothing(tmp_path: Path) -> None:
    (tmp_path / "secret.png").write_bytes(encoded("PNG", 2, 2))
    got = attach(f"look at {tmp_path}/secret.png", tmp_path, typed="/review")
    assert got.images == ()


def request_with(data: bytes) -> tuple[Request, Image]:
    image = image_of(data, "shot.png")
    msg = Message("user", "what is this?", images=(image,))
    return Request("m", (msg,), image_data={image.sha256: data}), image


def test_each_adapter_sends_the_image_in_its_apis_form() -> None:
    data = encoded("PNG", 3, 2)
    req, _ = request_with(data)
    url = "data:image/png;base64," + base64.b64encode(data).decode()
    assert openai_chat.messages(req) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        }
    ]
    assert openai_responses.inputs(req) == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "what is this?"},
                {"type": "input_image", "image_url": url},
            ],
        }
    ]
    source = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(data).decode()}
    assert anthropic.messages(req) == [
        {
            "role": "user",
            "content": [{"type": "image", "source": source}, {"type": "text", "text": "what is this?"}],
        }
    ]


def test_a_request_records_its_images_by_reference_never_their_bytes() -> None:
    data = encoded("PNG", 3, 2)
    req, image = request_with(data)
    row = codec.encode(req)
    assert base64.b64encode(data).decode() not in str(row)
    back = codec.decode(row)
    assert back.messages[0].images == (image,) and back.image_data == {}
    with pytest.raises(ImageError, match="not in the store's image table"):
        back.image_bytes(image)


def test_which_models_take_images() -> None:
    declared = {
        "models": {"vllm/qwen-vl": {"input": ["text", "image"]}, "openai/o-text": {"input": ["text"]}}
    }
    assert takes_images("openai", "gpt-4o", {}) and takes_images("anthropic", "claude", {})
    assert takes_images("vllm", "qwen-vl", declared) and not takes_images("vllm", "m", declared)
    assert not takes_images("openai", "o-text", declared)  # the setting wins


def steps_and_images(home: Path) -> tuple[str, int]:
    with sqlite3.connect(home / "eukhe.sqlite") as db:
        steps = " ".join(str(r[0]) for r in db.execute("select output from operation_outputs"))
        inputs = " ".join(str(r[0]) for r in db.execute("select inputs from workflow_status"))
        (n,) = db.execute("select count(*) from eukhe_images").fetchone()
    return steps + inputs, int(n)


@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
def test_eukhe_run_sends_an_image_once_stored_and_shows_its_mark(tmp_path: Path, api: str) -> None:
    data = encoded("PNG", 3, 2)
    (tmp_path / "shot.png").write_bytes(data)
    b64 = base64.b64encode(data).decode()
    with FauxServer(parse(["A red square.", "Still red."])) as server:
        runs = [
            eukhe(
                "run",
                "--model",
                "openai/vis",
                "--api",
                api,
                "--base-url",
                server.url,
                "--image",
                "shot.png",
                prompt,
                cwd=tmp_path,
                extra={"OPENAI_API_KEY": "sk-test"},
            )
            for prompt in ("what is this?", "and now?")
        ]
        bodies = [s.body for s in server.seen]
    for done in runs:
        assert done.returncode == 0, done.stderr
    assert len(bodies) == 2
    for body in bodies:
        user = body["messages"][-1]["content"]
        if api == "anthropic":
            assert user[0] == {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": b64},
            }
            assert user[1]["text"].endswith("[image: shot.png, 3x2]")
        else:
            assert user[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}
            assert user[0]["text"].endswith("[image: shot.png, 3x2]")
    rows, images = steps_and_images(tmp_path / "home")
    assert images == 1  # two runs, one image kept
    assert b64 not in rows and b64[:40] not in rows  # in no step output nor workflow input
    shown = eukhe("session", "show", runs[0].stderr.split()[1].rstrip(","), cwd=tmp_path)
    assert "[image: shot.png, 3x2]" in shown.stdout, shown.stdout + shown.stderr


def test_a_model_that_takes_no_images_is_refused_before_any_request(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(encoded("PNG", 3, 2))
    with FauxServer(parse(["never sent"])) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--image", "shot.png", "hi", cwd=tmp_path
        )
        sent = len(server.seen)
    assert done.returncode == 2 and sent == 0
    assert (
        "vllm/m does not take images" in done.stderr
        and 'models.vllm/m.input: ["text", "image"]' in done.stderr
    )


def test_a_models_input_that_is_not_a_list_of_text_and_image_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / ".eukhe").mkdir()
    (tmp_path / ".eukhe" / "settings.json").write_text('{"models": {"vllm/m": {"input": "image"}}}')
    done = eukhe("run", "--model", "vllm/m", "hi", cwd=tmp_path)
    assert done.returncode == 2
    assert "models.vllm/m.input" in done.stderr and '["text", "image"]' in done.stderr, done.stderr
