"""``LineFramer``: newline framing with a byte bound enforced while the bytes arrive."""

from __future__ import annotations

import pytest

from beammcp_django.protocol import wire
from beammcp_django.transports.stdio import OVERFLOW, LineFramer

LIMIT = 16


def feed_all(framer: LineFramer, *chunks: bytes) -> list:
    frames: list = []
    for chunk in chunks:
        frames.extend(framer.feed(chunk))
    return frames


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


def test_the_default_bound_is_the_wire_limit_of_one_mebibyte():
    assert LineFramer().limit == wire.MAX_MESSAGE_BYTES == 1_048_576


def test_lines_are_split_on_newlines_without_the_newline():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"one\ntwo\nthree\n") == [b"one", b"two", b"three"]


def test_a_line_split_across_chunks_is_reassembled():
    framer = LineFramer(LIMIT)

    assert feed_all(framer, b"he", b"ll", b"o\nwor", b"ld\n") == [b"hello", b"world"]


def test_a_partial_line_is_held_until_its_newline_arrives():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"pending") == []
    assert framer.feed(b"\n") == [b"pending"]


def test_a_line_of_exactly_the_bound_is_accepted():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"a" * LIMIT + b"\n") == [b"a" * LIMIT]


def test_a_line_of_exactly_the_bound_is_accepted_when_its_newline_comes_in_a_later_chunk():
    framer = LineFramer(LIMIT)

    assert feed_all(framer, b"a" * (LIMIT - 1), b"a", b"\n") == [b"a" * LIMIT]


def test_a_line_one_byte_over_the_bound_is_refused():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"a" * (LIMIT + 1) + b"\n") == [OVERFLOW]


def test_the_overflow_is_reported_as_soon_as_the_bound_is_crossed_before_the_newline():
    framer = LineFramer(LIMIT)

    # One byte past the bound may still be the '\r' of a CRLF ending; two cannot be.
    assert framer.feed(b"a" * (LIMIT + 1)) == []
    assert framer.feed(b"a") == [OVERFLOW]
    assert framer.feed(b"a" * 100) == []
    assert framer.feed(b"\n") == []


def test_a_long_line_fed_in_many_chunks_is_reported_once_and_its_tail_is_discarded():
    framer = LineFramer(LIMIT)
    long_line = b'{"tail":"' + b"z" * 5000 + b'"}\n'

    frames = feed_all(framer, *chunked(long_line, 7), b"next\n")

    assert frames == [OVERFLOW, b"next"]


def test_the_tail_of_a_long_line_is_discarded_even_when_it_looks_like_a_message():
    framer = LineFramer(LIMIT)
    smuggled = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'

    frames = feed_all(framer, b" " * LIMIT, b" ", smuggled, b"\n", b"ok\n")

    assert frames == [OVERFLOW, b"ok"]


def test_each_long_line_is_reported_once_when_several_share_a_chunk():
    framer = LineFramer(LIMIT)

    frames = framer.feed(b"x" * 40 + b"\n" + b"short\n" + b"y" * 17 + b"\n" + b"last\n")

    assert frames == [OVERFLOW, b"short", OVERFLOW, b"last"]


def test_the_framer_holds_no_more_than_the_bound_while_discarding():
    framer = LineFramer(LIMIT)

    for chunk in chunked(b"q" * 100_000, 1000):
        framer.feed(chunk)

    assert len(framer._buffer) <= LIMIT


@pytest.mark.parametrize("size", [1, 3, 64, 1000])
def test_framing_does_not_depend_on_how_the_bytes_are_chunked(size):
    stream = b"alpha\r\n" + b"b" * 50 + b"\n" + b"gamma\n\ndelta\n" + b"e" * LIMIT + b"\n"

    frames = feed_all(LineFramer(LIMIT), *chunked(stream, size))

    assert frames == [b"alpha", OVERFLOW, b"gamma", b"", b"delta", b"e" * LIMIT]


def test_a_crlf_line_ending_loses_its_carriage_return():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"windows\r\n") == [b"windows"]


def test_a_carriage_return_split_from_its_newline_is_still_stripped():
    framer = LineFramer(LIMIT)

    assert feed_all(framer, b"split\r", b"\n") == [b"split"]


def test_only_the_one_carriage_return_before_the_newline_is_stripped():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"a\rb\r\r\n") == [b"a\rb\r"]


def test_an_empty_line_is_framed_as_empty_bytes():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"\n\n") == [b"", b""]


def test_finish_returns_a_final_line_without_newline():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"first\nlast") == [b"first"]
    assert framer.finish() == [b"last"]


def test_finish_strips_a_trailing_carriage_return_from_the_final_line():
    framer = LineFramer(LIMIT)
    framer.feed(b"last\r")

    assert framer.finish() == [b"last"]


def test_finish_returns_nothing_when_the_input_ended_with_a_newline():
    framer = LineFramer(LIMIT)
    framer.feed(b"done\n")

    assert framer.finish() == []


def test_finish_returns_nothing_for_a_final_line_that_already_overflowed():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"z" * (LIMIT + 5)) == [OVERFLOW]
    assert framer.finish() == []


def test_a_final_line_of_exactly_the_bound_without_newline_is_returned_by_finish():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"f" * LIMIT) == []
    assert framer.finish() == [b"f" * LIMIT]


def test_the_real_bound_accepts_one_mebibyte_and_refuses_one_byte_more():
    exact = LineFramer()
    over = LineFramer()
    line = b"m" * wire.MAX_MESSAGE_BYTES

    assert feed_all(exact, *chunked(line + b"\n", 65_536)) == [line]
    assert feed_all(over, *chunked(line + b"m\n", 65_536), b"{}\n") == [OVERFLOW, b"{}"]


def test_a_crlf_line_of_exactly_the_bound_is_accepted_without_its_carriage_return():
    framer = LineFramer(LIMIT)

    assert framer.feed(b"a" * LIMIT + b"\r\n") == [b"a" * LIMIT]
