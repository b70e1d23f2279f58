"""The events that end a principal's credentials, heard in process (``credential_signals.py``):
a user saved inactive, a permission or a group taken from a user, a permission taken from a
group, each published as the end of that user's streams on the change feed every stream
listens to, and each forgetting the grants the bearer token cache holds for the user.
django-oauth-toolkit's revocation, over HTTP: ``tests/interop/test_sdk_oauth.py``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User

from beammcp_django import notify
from beammcp_django.authorization import Grant
from beammcp_django.oauth.bearer import TokenCache
from beammcp_django.protocol.listen_filter import ended_key
from beammcp_django.protocol.principal import principal_key

pytestmark = pytest.mark.django_db(transaction=True)


def ended_by(action: Callable[[], Any]) -> list[str]:
    """The principal keys the change feed announced as ended while ``action`` ran (in a
    thread of its own, as a view or a management command would)."""

    async def run() -> list[str]:
        layer = notify.channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(notify.GROUP, channel)
        try:
            await asyncio.to_thread(action)
            keys = []
            while True:
                try:
                    async with asyncio.timeout(0.2):
                        event = await layer.receive(channel)
                except TimeoutError:
                    return keys
                key = ended_key(event)
                if key is not None:
                    keys.append(key)
        finally:
            await layer.group_discard(notify.GROUP, channel)

    return asyncio.run(run())


@pytest.fixture
def ada() -> User:
    user = User.objects.create_user("ada")
    user.user_permissions.add(Permission.objects.get(codename="delete_observation"))
    return user


def test_a_user_saved_inactive_is_ended_and_an_active_one_is_not(ada):
    ada.first_name = "Ada"
    assert ended_by(ada.save) == []
    ada.is_active = False
    assert ended_by(ada.save) == [principal_key(ada)]


def test_a_permission_or_a_group_taken_from_a_user_ends_them(ada):
    permission = Permission.objects.get(codename="delete_observation")
    assert ended_by(lambda: ada.user_permissions.remove(permission)) == [principal_key(ada)]
    group = Group.objects.create(name="editors")
    assert ended_by(lambda: ada.groups.add(group)) == []  # a gain ends nothing
    assert ended_by(lambda: group.user_set.remove(ada)) == [principal_key(ada)]


def test_a_permission_taken_from_a_group_ends_its_users(ada):
    permission = Permission.objects.get(codename="delete_observation")
    group = Group.objects.create(name="deleters")
    group.permissions.add(permission)
    grace = User.objects.create_user("grace")
    group.user_set.add(ada, grace)
    ended = ended_by(lambda: group.permissions.remove(permission))
    assert sorted(ended) == sorted([principal_key(ada), principal_key(grace)])


def test_the_token_cache_forgets_every_grant_of_an_ended_principal_alone(ada):
    cache = TokenCache(16)
    bob = User.objects.create_user("bob")
    for digest, user in ((b"1", ada), (b"2", ada), (b"3", bob)):
        cache.put(digest, Grant(user, frozenset(), 9e9), until=9e9)
    assert cache.forget(principal_key(ada)) == 2
    assert cache.get(b"1", 0) is None and cache.get(b"2", 0) is None
    assert cache.get(b"3", 0) is not None
