"""The opaque, authenticated keyset cursor (beammcp_django.protocol.cursor)."""

from __future__ import annotations

import base64
import json

import pytest

from beammcp_django.protocol.cursor import CursorCodec, InvalidCursor

KEY = b"a cursor key for the tests"


@pytest.fixture
def codec() -> CursorCodec:
    return CursorCodec(KEY)


@pytest.mark.parametrize("last_key", ["alpha", "", "file:///a b/\u00e9", "x" * 300, '"]['])
def test_a_cursor_decodes_to_the_last_key_it_was_minted_with(codec, last_key):
    assert codec.decode(codec.encode("tools/list", last_key), "tools/list") == last_key


def test_a_cursor_is_url_safe_ascii_without_padding(codec):
    cursor = codec.encode("resources/list", "file:///\u00e9?x=1&y=2")
    assert cursor.isascii()
    assert not set(cursor) & set("+/=")


def test_a_cursor_for_one_list_is_refused_by_another(codec):
    cursor = codec.encode("tools/list", "alpha")
    with pytest.raises(InvalidCursor):
        codec.decode(cursor, "prompts/list")


def test_a_cursor_minted_with_another_key_is_refused(codec):
    cursor = CursorCodec(b"some other key").encode("tools/list", "alpha")
    with pytest.raises(InvalidCursor):
        codec.decode(cursor, "tools/list")


def test_a_cursor_with_an_edited_payload_is_refused(codec):
    raw = base64.urlsafe_b64decode(codec.encode("tools/list", "alpha") + "==")
    forged = raw[:12] + json.dumps(["tools/list", "zulu"], separators=(",", ":")).encode()
    cursor = base64.urlsafe_b64encode(forged).decode().rstrip("=")
    with pytest.raises(InvalidCursor):
        codec.decode(cursor, "tools/list")


def test_a_cursor_with_every_single_character_changed_is_refused(codec):
    cursor = codec.encode("tools/list", "alpha")
    for position in range(len(cursor) - 1):
        replacement = "A" if cursor[position] != "A" else "B"
        edited = cursor[:position] + replacement + cursor[position + 1 :]
        with pytest.raises(InvalidCursor):
            codec.decode(edited, "tools/list")


def test_an_unauthenticated_payload_is_refused(codec):
    payload = json.dumps(["tools/list", "alpha"]).encode()
    cursor = base64.urlsafe_b64encode(b"\0" * 12 + payload).decode()
    with pytest.raises(InvalidCursor):
        codec.decode(cursor, "tools/list")


@pytest.mark.parametrize("cursor", ["", "a", "!!!!", "====", "\u00e9t\u00e9", "\0", "A" * 1000])
def test_garbage_is_refused_as_an_invalid_cursor(codec, cursor):
    with pytest.raises(InvalidCursor):
        codec.decode(cursor, "tools/list")


def test_a_truncated_cursor_is_refused(codec):
    cursor = codec.encode("tools/list", "alpha")
    for length in range(len(cursor)):
        with pytest.raises(InvalidCursor):
            codec.decode(cursor[:length], "tools/list")


def test_an_empty_key_is_refused():
    with pytest.raises(ValueError):
        CursorCodec(b"")
