"""Builders for content blocks, resource contents and prompt messages."""

from __future__ import annotations

import base64
import json

from beammcp_django.protocol import content

PNG = b"\x89PNG\r\n\x1a\n\x00\xff"


def test_text_builds_a_text_block():
    assert content.text("hello") == {"type": "text", "text": "hello"}


def test_annotations_are_copied_onto_the_block():
    annotations = {"audience": ["user"], "priority": 0.5}
    block = content.text("x", annotations=annotations)
    assert block["annotations"] == annotations
    block["annotations"]["priority"] = 1
    assert annotations["priority"] == 0.5


def test_empty_annotations_are_left_out():
    assert "annotations" not in content.text("x", annotations={})


def test_image_and_audio_are_base64_with_their_mime_type():
    image = content.image(PNG, "image/png")
    assert image == {
        "type": "image",
        "data": base64.b64encode(PNG).decode("ascii"),
        "mimeType": "image/png",
    }
    assert base64.b64decode(image["data"]) == PNG
    audio = content.audio(b"RIFF", "audio/wav", annotations={"priority": 1})
    assert audio == {
        "type": "audio",
        "data": "UklGRg==",
        "mimeType": "audio/wav",
        "annotations": {"priority": 1},
    }


def test_a_resource_link_carries_only_the_fields_given():
    assert content.resource_link("file:///a", "a") == {
        "type": "resource_link",
        "uri": "file:///a",
        "name": "a",
    }
    full = content.resource_link(
        "file:///a", "a", title="A", description="the a", mime_type="text/plain", size=0
    )
    assert full == {
        "type": "resource_link",
        "uri": "file:///a",
        "name": "a",
        "title": "A",
        "description": "the a",
        "mimeType": "text/plain",
        "size": 0,
    }


def test_text_and_blob_contents_are_resource_contents():
    assert content.text_contents("config://app", "{}") == {"uri": "config://app", "text": "{}"}
    assert content.text_contents("config://app", "{}", "application/json") == {
        "uri": "config://app",
        "mimeType": "application/json",
        "text": "{}",
    }
    assert content.blob_contents("img://a", PNG, "image/png") == {
        "uri": "img://a",
        "mimeType": "image/png",
        "blob": base64.b64encode(PNG).decode("ascii"),
    }


def test_embedded_resources_wrap_resource_contents():
    assert content.embedded_text("file:///a", "body", "text/plain") == {
        "type": "resource",
        "resource": {"uri": "file:///a", "mimeType": "text/plain", "text": "body"},
    }
    blob = content.embedded_blob("file:///b", b"\x00", annotations={"audience": ["assistant"]})
    assert blob == {
        "type": "resource",
        "resource": {"uri": "file:///b", "blob": "AA=="},
        "annotations": {"audience": ["assistant"]},
    }


def test_a_prompt_message_from_a_string_holds_one_text_block():
    assert content.user("hi") == {"role": "user", "content": {"type": "text", "text": "hi"}}
    assert content.assistant("ok") == {
        "role": "assistant",
        "content": {"type": "text", "text": "ok"},
    }


def test_a_prompt_message_from_a_block_holds_a_copy_of_it():
    block = content.image(PNG, "image/png")
    message = content.message("user", block)
    assert message == {"role": "user", "content": block}
    assert message["content"] is not block


def test_every_builder_produces_plain_json():
    blocks = [
        content.text("\u00e9"),
        content.image(PNG, "image/png"),
        content.audio(PNG, "audio/wav"),
        content.resource_link("x://y", "y"),
        content.embedded_text("x://y", "z"),
        content.embedded_blob("x://y", PNG),
        content.user("u"),
    ]
    assert json.loads(json.dumps(blocks)) == blocks
