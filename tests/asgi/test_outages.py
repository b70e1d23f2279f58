"""``transports.outages`` on its own: an outage logged once as it starts and once as it ends
whatever the number of requests that meet it, from any thread; what ``reaching`` turns into
``PartDown`` and what it lets through. ``tests/http/test_part_outages.py`` stops real parts."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from beammcp_django.protocol.errors import PartDown
from beammcp_django.transports.outages import Outages

PART = "the test's part"


def test_an_outage_is_logged_once_as_it_starts_and_once_as_it_ends(caplog):
    outages = Outages()
    with caplog.at_level(logging.WARNING, logger="beammcp_django"):
        outages.up(PART)  # nothing was down: nothing said
        threads = [
            threading.Thread(target=outages.down, args=(PART, ConnectionError("refused")))
            for _ in range(50)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert outages.is_down(PART)
        for _ in range(50):
            outages.up(PART)
    said = [(record.levelname, record.getMessage()) for record in caplog.records]
    assert len(said) == 2, said
    assert said[0][0] == "ERROR"
    assert said[0][1].startswith(f"{PART} is unavailable (ConnectionError: refused)")
    assert said[1][0] == "WARNING" and said[1][1].startswith(f"{PART} answers again, after ")
    assert not outages.is_down(PART)


def test_reaching_names_the_part_for_the_errors_it_lists_and_lets_others_through(caplog):
    outages = Outages()
    with pytest.raises(PartDown) as down, outages.reaching(PART, (ConnectionError,)):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
    assert down.value.part == PART
    assert down.value.message == f"{PART} is unavailable; send the request again later"
    assert down.value.__cause__ is None and down.value.__suppress_context__  # nothing of it
    with pytest.raises(KeyError), outages.reaching(PART, (ConnectionError,)):
        raise KeyError("a fault of the code, not an outage")
    with outages.reaching(PART, (ConnectionError,)):
        pass  # an answer: the outage ends
    assert not outages.is_down(PART)


def test_a_call_that_straddles_a_transition_says_nothing_of_the_part_now(caplog):
    """A call begun before an outage started that succeeds after it started (it got its
    answer in time) does not end the outage; one begun before the part recovered that fails
    after (it waited on a dead connection) does not start another."""
    outages = Outages()
    with caplog.at_level(logging.WARNING, logger="beammcp_django"):
        slow_success = time.monotonic()
        outages.down(PART, ConnectionError("refused"))
        outages.up(PART, began=slow_success)
        assert outages.is_down(PART)
        slow_failure = time.monotonic()
        outages.up(PART)
        outages.down(PART, ConnectionError("reset"), began=slow_failure)
        assert not outages.is_down(PART)
    assert [record.levelname for record in caplog.records] == ["ERROR", "WARNING"]
