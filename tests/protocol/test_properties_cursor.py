"""Properties of the pagination cursor (``beammcp_django.protocol.cursor``), held by hypothesis.

A cursor decodes to the key it was minted with, for the list it was minted for, and only
the exact text the codec wrote is accepted: every edit, truncation, other list, other key or
random string is refused with ``InvalidCursor`` and nothing else.
"""

from __future__ import annotations

import base64
import string

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from beammcp_django.protocol.cursor import CursorCodec, InvalidCursor
from tests.support import examples

PROPERTY = settings(max_examples=examples(150), deadline=None, database=None)

KEY = b"a cursor key for the property tests"
CODEC = CursorCodec(KEY)
URL_SAFE_ALPHABET = string.ascii_letters + string.digits + "-_"

# Every code point, lone surrogates included: list names and keys are whatever the host uses.
TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
METHODS = st.sampled_from(["tools/list", "resources/list", "prompts/list"]) | TEXT
# A cursor's own characters, the padding and separators it never holds, and any other.
CURSOR_CHARACTERS = st.sampled_from(list(URL_SAFE_ALPHABET + "=+/.! \n\0")) | st.characters(
    exclude_categories=()
)


def refused(cursor: str, method: str, codec: CursorCodec = CODEC) -> bool:
    """True when ``codec`` refuses ``cursor`` with ``InvalidCursor``; any other exception
    propagates and fails the test."""
    try:
        codec.decode(cursor, method)
    except InvalidCursor:
        return True
    return False


@PROPERTY
@given(method=METHODS, last_key=TEXT)
def test_a_cursor_decodes_to_the_key_it_was_minted_with_and_is_url_safe(method, last_key):
    cursor = CODEC.encode(method, last_key)
    assert set(cursor) <= set(URL_SAFE_ALPHABET)
    assert CODEC.decode(cursor, method) == last_key


@PROPERTY
@given(
    method=METHODS,
    last_key=TEXT,
    position=st.integers(),
    replacement=st.integers(min_value=1, max_value=63) | CURSOR_CHARACTERS,
)
# The token of ("tools/list", "alpha") is 34 bytes, so the last character carries 4 spare
# bits; flipping one of them once decoded to the same token and was accepted.
@example(method="tools/list", last_key="alpha", position=-1, replacement=1)
def test_a_cursor_with_any_one_character_replaced_is_refused(
    method, last_key, position, replacement
):
    """``replacement`` is a character, or a change (xor) of the 6 bits a cursor character
    carries, which keeps it in the alphabet."""
    cursor = CODEC.encode(method, last_key)
    position %= len(cursor)
    if isinstance(replacement, int):
        char = URL_SAFE_ALPHABET[URL_SAFE_ALPHABET.index(cursor[position]) ^ replacement]
    else:
        char = replacement
    assume(char != cursor[position])
    assert refused(cursor[:position] + char + cursor[position + 1 :], method)


@PROPERTY
@given(
    method=METHODS,
    last_key=TEXT,
    position=st.integers(),
    inserted=st.text(CURSOR_CHARACTERS, min_size=1, max_size=4),
)
# Padding, and bytes after it, were skipped by the lenient base64 decoder and accepted.
@example(method="tools/list", last_key="alpha", position=-1, inserted="=")
@example(method="tools/list", last_key="alpha", position=-1, inserted="==")
@example(method="tools/list", last_key="alpha", position=-1, inserted="===A")
def test_a_cursor_with_characters_inserted_or_deleted_is_refused(
    method, last_key, position, inserted
):
    cursor = CODEC.encode(method, last_key)
    position %= len(cursor) + 1
    assert refused(cursor[:position] + inserted + cursor[position:], method)
    if position < len(cursor):
        assert refused(cursor[:position] + cursor[position + 1 :], method)


@PROPERTY
@given(method=METHODS, last_key=TEXT, length=st.integers(min_value=0))
def test_a_truncated_cursor_is_refused(method, last_key, length):
    cursor = CODEC.encode(method, last_key)
    assert refused(cursor[: length % len(cursor)], method)


@PROPERTY
@given(method=METHODS, last_key=TEXT, position=st.integers(min_value=0), flip=st.integers(1, 255))
def test_a_cursor_with_any_byte_of_its_token_changed_is_refused(method, last_key, position, flip):
    """The edit a forger makes: decode the token, change a byte (the key, the list name or
    the MAC), encode it again the codec's own way."""
    token = bytearray(base64.urlsafe_b64decode(CODEC.encode(method, last_key) + "=="))
    token[position % len(token)] ^= flip
    forged = base64.urlsafe_b64encode(bytes(token)).decode("ascii").rstrip("=")
    assert refused(forged, method)


@PROPERTY
@given(method=METHODS, other=METHODS, last_key=TEXT)
def test_a_cursor_is_refused_by_every_other_list(method, other, last_key):
    cursor = CODEC.encode(method, last_key)
    assert refused(cursor, other) is (other != method)


@PROPERTY
@given(key=st.binary(min_size=1, max_size=40), method=METHODS, last_key=TEXT)
def test_a_cursor_from_a_codec_with_another_key_is_refused(key, method, last_key):
    cursor = CursorCodec(key).encode(method, last_key)
    assert refused(cursor, method) is (key != KEY)


@PROPERTY
@given(cursor=st.text(CURSOR_CHARACTERS, max_size=120), method=METHODS)
@example(cursor="", method="tools/list")
@example(cursor="A" * 1000, method="tools/list")
def test_a_random_string_is_refused_and_never_crashes_the_codec(cursor, method):
    assert refused(cursor, method)


@pytest.mark.parametrize("key", [b"", ""])
def test_a_codec_without_a_key_cannot_be_built(key):
    with pytest.raises(ValueError):
        CursorCodec(key)
