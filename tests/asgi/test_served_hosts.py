"""The memo of allowed Host values: a shortcut for hosts already checked, never a way in for
one that is not, and bounded however many names a wildcard admits."""

from __future__ import annotations

import pytest

from beammcp_django.servers.http_settings import host_check
from beammcp_django.transports.admission import check_host_and_origin
from beammcp_django.transports.policy import HttpPolicy, ServedHosts
from beammcp_django.transports.replies import Refused


class OneHeader:
    def __init__(self, host: str) -> None:
        self.host = host

    def one(self, name: str) -> str | None:
        return self.host if name == "host" else None


def policy(*allowed: str) -> HttpPolicy:
    return HttpPolicy(
        allowed_origins=None,
        serves_host=host_check(allowed),
        use_forwarded_host=False,
        authorize=lambda request: True,
        body_timeout=1.0,
    )


def test_an_allowed_host_is_remembered_and_a_refused_one_never_is():
    served = policy("api.example.com")
    check_host_and_origin(OneHeader("api.example.com"), served)
    assert "api.example.com" in served.served_hosts
    with pytest.raises(Refused):
        check_host_and_origin(OneHeader("evil.example.net"), served)
    with pytest.raises(Refused):
        check_host_and_origin(OneHeader("evil.example.net"), served)
    assert "evil.example.net" not in served.served_hosts


def test_ten_thousand_names_a_wildcard_admits_leave_the_memo_within_its_limit():
    served = policy(".example.com")
    for number in range(10_000):
        check_host_and_origin(OneHeader(f"n{number}.example.com"), served)
        assert len(served.served_hosts) <= ServedHosts.LIMIT
