"""A task's status change announced on the channel layer (``task_store.announce``): only
when a layer is configured that other processes can share, only once the change committed,
carrying the ``DetailedTask`` that ``tasks/get`` answers; a publication that fails is logged
and the change stands."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest
from django.test import override_settings

from beammcp_django import notify
from beammcp_django.protocol.task_wire import COMPLETED
from beammcp_django.tasks import store as task_store

pytestmark = pytest.mark.django_db

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
UNREACHABLE = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [{"address": "redis://127.0.0.1:1/0", "socket_timeout": 30}]},
    }
}


def finished_task(capture) -> tuple[str, list]:
    """A task claimed and completed; the commit callbacks it queued, run."""
    task = task_store.create("key:ada", "echo", {}, ttl_ms=60_000, poll_interval_ms=500)
    assert task_store.claim(task.task_id, lease=timedelta(seconds=30), max_attempts=1)
    with capture(execute=True) as callbacks:
        assert task_store.finish(task.task_id, result={"content": []}) == COMPLETED
    return task.task_id, callbacks


def test_a_move_is_announced_after_it_commits_with_what_tasks_get_answers(
    django_capture_on_commit_callbacks,
):
    with override_settings(CHANNEL_LAYERS=IN_MEMORY):
        layer = notify.channel_layer()
        channel = asyncio.run(layer.new_channel())
        asyncio.run(layer.group_add(notify.GROUP, channel))
        task_id, callbacks = finished_task(django_capture_on_commit_callbacks)
        event = asyncio.run(layer.receive(channel))
    assert len(callbacks) == 1
    found = task_store.find(task_id, "key:ada")
    assert event["kind"] == "task" and event["taskId"] == task_id
    assert event["task"] == task_store.view_of(found).detailed()


def test_without_a_shared_layer_nothing_is_announced(django_capture_on_commit_callbacks):
    with override_settings(CHANNEL_LAYERS={}):
        _, callbacks = finished_task(django_capture_on_commit_callbacks)
    assert callbacks == []


def test_a_publication_that_fails_is_logged_and_the_change_stands(
    django_capture_on_commit_callbacks, caplog
):
    with override_settings(CHANNEL_LAYERS=UNREACHABLE), caplog.at_level(logging.ERROR):
        task_id, _ = finished_task(django_capture_on_commit_callbacks)
    assert "its status notification was not published" in caplog.text
    assert task_store.find(task_id, "key:ada").status == COMPLETED
