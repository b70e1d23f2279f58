"""The session store's lean line to Redis (``transports/sessions/redis_line.py``): RESP2
replies read whole or waited for, against a real redis-server its set-up (credentials, a
database, a Unix socket), one call's error kept to that call, and Redis that cannot serve
(refused credentials, a reply too late, a connection cut) named as unavailable, the line
connecting again on the next call."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from beammcp_django.transports.sessions.redis_line import (
    RedisLine,
    RedisReplyError,
    RedisUnavailable,
    encode_command,
    encoded,
    read_reply,
)
from tests.http.mcphttp_support import RedisServer

SET_AND_READ = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])"
FAILS = "return redis.error_reply('BADTHING this call is wrong')"


def line_to(url: str, **options: Any) -> RedisLine:
    from redis.asyncio import BlockingConnectionPool

    pool = BlockingConnectionPool.from_url(url, max_connections=2, timeout=1, **options)
    return RedisLine(pool.make_connection())


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(scenario())


def value_in(url: str, key: str) -> bytes | None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return client.get(key)
    finally:
        client.close()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"$5\r\nhello\r\n", b"hello"),
        (b"$0\r\n\r\n", b""),
        (b"$-1\r\n", None),
        (b"*-1\r\n", None),
        (b":-42\r\n", -42),
        (b"+OK\r\n", b"OK"),
        (b"*3\r\n$1\r\na\r\n*1\r\n:7\r\n$-1\r\n", [b"a", [7], None]),
    ],
)
def test_a_whole_reply_is_read_to_its_end(raw: bytes, expected: Any):
    reply, end = read_reply(bytearray(raw + b"+next\r\n"), 0)
    assert reply == expected and end == len(raw)


def test_a_part_encoded_once_is_sent_as_the_same_bytes():
    parts = ("EVALSHA", "key:1", 1800000, "prefix:", b"raw")
    once = [encoded(part) if index % 2 else part for index, part in enumerate(parts)]
    assert encode_command(*once) == encode_command(*parts)
    assert encode_command(*parts) == (
        b"*5\r\n$7\r\nEVALSHA\r\n$5\r\nkey:1\r\n$7\r\n1800000\r\n$7\r\nprefix:\r\n$3\r\nraw\r\n"
    )


def test_a_reply_cut_anywhere_is_waited_for_never_misread():
    raw = b"*2\r\n$5\r\nhello\r\n:12\r\n"
    for cut in range(len(raw)):
        reply, end = read_reply(bytearray(raw[:cut]), 0)
        assert end == 0 and reply is not None and not isinstance(reply, (list, bytes, int))
    assert read_reply(bytearray(raw), 0) == ([b"hello", 12], len(raw))


def test_error_replies_are_values_and_redis_unable_to_serve_is_named_apart():
    refused, _ = read_reply(bytearray(b"-WRONGTYPE Operation against a key\r\n"), 0)
    assert isinstance(refused, RedisReplyError) and refused.words.startswith(b"WRONGTYPE")
    for words in (b"LOADING Redis is loading", b"OOM command not allowed", b"READONLY replica"):
        down, _ = read_reply(bytearray(b"-" + words + b"\r\n"), 0)
        assert isinstance(down, RedisUnavailable), words
        assert isinstance(down, ConnectionError)
    with pytest.raises(RedisUnavailable, match="not have"):
        read_reply(bytearray(b"%2\r\n"), 0)  # RESP3's map: this line asked for RESP2


def test_credentials_a_database_and_one_calls_error_kept_to_that_call(tmp_path: Path):
    """Scripts and plain commands share the line; an error reply is only its own call's."""
    users = ["--user", "default", "off", "--user", "mcp", "on", ">s3cret", "~*", "+@all"]
    redis = RedisServer(tmp_path, *users).start()
    try:
        url = f"redis://mcp:s3cret@127.0.0.1:{redis.port}/3"

        async def scenario() -> list[Any]:
            line = line_to(url)
            return await asyncio.gather(
                line.script(SET_AND_READ, ["first"], ["one"]),
                line.script(FAILS, [], []),
                line.script(SET_AND_READ, ["third"], ["three"]),
                line.command(encode_command(b"NOSUCHCOMMAND")),
                line.command(encode_command(b"SET", b"plain", b"p")),
                line.command(encode_command(b"MGET", b"plain", b"none")),
                return_exceptions=True,
            )

        first, failed, third, unknown, written, read = run(scenario)
        assert (first, third) == (b"one", b"three")
        assert isinstance(failed, RedisReplyError) and "BADTHING" in str(failed)
        assert isinstance(unknown, RedisReplyError) and "unknown command" in str(unknown)
        assert (written, read) == (b"OK", [b"p", None])
        assert value_in(url, "first") == b"one"  # in database 3, where the URL said
        assert value_in(url.replace("/3", "/0"), "first") is None

        async def refused() -> None:
            await line_to(f"redis://mcp:wrong@127.0.0.1:{redis.port}/0").script(FAILS, [], [])

        with pytest.raises(RedisUnavailable, match="set-up") as raised:
            run(refused)
        assert "wrong" not in str(raised.value)  # the password is never echoed
    finally:
        redis.stop()


def test_a_unix_socket_url_is_served(tmp_path: Path):
    path = tmp_path / "redis.sock"
    redis = RedisServer(tmp_path, "--unixsocket", str(path), "--unixsocketperm", "700").start()
    try:

        async def scenario() -> Any:
            return await line_to(f"unix://{path}?db=2").script(SET_AND_READ, ["k"], ["by socket"])

        assert run(scenario) == b"by socket"
        assert value_in(f"redis://127.0.0.1:{redis.port}/2", "k") == b"by socket"
    finally:
        redis.stop()


def test_a_cut_connection_fails_its_call_by_name_and_the_next_call_connects_again(
    tmp_path: Path,
):
    redis = RedisServer(tmp_path).start()
    try:

        async def scenario() -> tuple[Any, BaseException, Any]:
            line = line_to(redis.url)
            before = await line.script(SET_AND_READ, ["k"], ["before"])
            waiting = asyncio.ensure_future(line.script("while true do end", [], []))
            await asyncio.sleep(0.2)  # Redis is busy in the script when it stops
            redis.process.kill()
            redis.process.wait()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(waiting), 5)
            lost = waiting.exception()
            redis.start()
            return before, lost, await line.script(SET_AND_READ, ["k"], ["after"])

        before, lost, after = run(scenario)
        assert before == b"before" and after == b"after"
        assert isinstance(lost, RedisUnavailable) and "lost" in str(lost)
    finally:
        redis.stop()


def test_a_reply_later_than_the_socket_timeout_is_redis_unavailable():
    """A peer that takes the command and never answers (a Redis stopped mid-call looks so)."""
    quiet = socket.socket()
    quiet.bind(("127.0.0.1", 0))
    quiet.listen()
    port = quiet.getsockname()[1]
    try:

        async def scenario() -> None:
            line = line_to(f"redis://127.0.0.1:{port}/0", socket_timeout=0.3)
            with pytest.raises(RedisUnavailable, match=r"did not answer within 0\.3 s"):
                await line.script(SET_AND_READ, ["k"], ["v"])

        run(scenario)
    finally:
        quiet.close()


def test_calls_waiting_for_a_connection_share_one_attempt_and_its_failure():
    """A Redis that takes the connection and never answers its set-up (AUTH): twenty calls
    made together wait for one attempt, all fail when its ``socket_connect_timeout`` runs
    out, and the half-made connection is closed, not left open."""

    async def scenario() -> tuple[list[BaseException], int, bool]:
        accepted: list[asyncio.StreamReader] = []
        closed = asyncio.Event()

        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(reader)
            while await reader.read(1024):  # the AUTH, never answered
                pass
            closed.set()

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            line = line_to(f"redis://:secret@127.0.0.1:{port}/0", socket_connect_timeout=0.3)
            calls = [line.script(SET_AND_READ, ["k"], ["v"]) for _ in range(20)]
            failed = await asyncio.gather(*calls, return_exceptions=True)
            await asyncio.wait_for(closed.wait(), 5)
            return failed, len(accepted), closed.is_set()

    failed, attempts, closed = run(scenario)
    assert all(isinstance(failure, TimeoutError) for failure in failed), failed
    assert attempts == 1 and closed
