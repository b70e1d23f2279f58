"""The tasks page of the admin: the tasks listed read-only with no argument value, result
or input request shown, filtered by status, and cancelled through the same transition as
``tasks/cancel``, by users holding the change permission on tasks only."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from beammcp_django.models import McpTask
from beammcp_django.protocol.task_wire import CANCELLED, COMPLETED, INPUT_REQUIRED, WORKING
from beammcp_django.tasks import store as task_store

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:beammcp_django_mcptask_changelist")
SECRET = "argument-value-that-must-never-be-shown"
LEASE = timedelta(seconds=30)


def tasks() -> dict[str, McpTask]:
    """A running, a waiting and a finished task, each carrying the secret in its arguments,
    its input request or its result."""
    made = {}
    for name in ("running", "waiting", "finished"):
        task = task_store.create(
            "model:auth.user:1",
            f"{name}_job",
            {"token": SECRET},
            ttl_ms=60_000,
            poll_interval_ms=500,
        )
        task_store.claim(task.task_id, lease=LEASE, max_attempts=3)
        made[name] = task
    task_store.ask(
        made["waiting"].task_id,
        {"confirm": {"method": "elicitation/create", "params": {"message": SECRET}}},
    )
    task_store.finish(
        made["finished"].task_id, result={"content": [{"type": "text", "text": SECRET}]}
    )
    return made


def listed_tools(page: str) -> list[str]:
    """The tool column of the change list's rows (the filter's choices name every tool)."""
    return re.findall(r'<td class="field-tool">([^<]*)</td>', page)


def staff(*codenames: str) -> Client:
    name = "operator-" + "-".join(codenames)
    user = User.objects.create_user(name, password="unused", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def test_the_list_shows_where_each_task_stands_and_nothing_the_client_sent_or_got(admin_client):
    made = tasks()
    page = admin_client.get(CHANGELIST).content.decode()
    for name in ("running_job", "waiting_job", "finished_job"):
        assert name in page
    assert "waiting for 1 input(s)" in page and "result of 1 content block(s)" in page
    assert SECRET not in page
    for task in made.values():
        # Quoted as the admin quotes its own links: a task id may hold "_2F" and the like,
        # which the change view would otherwise unquote into another id (a rare CI 302).
        change = reverse("admin:beammcp_django_mcptask_change", args=[quote(task.pk)])
        detail = admin_client.get(change)
        assert detail.status_code == 200
        body = detail.content.decode()
        assert task.tool in body and SECRET not in body
        assert 'name="_save"' not in body  # nothing to edit
    assert sorted(listed_tools(page)) == ["finished_job", "running_job", "waiting_job"]
    only_waiting = admin_client.get(CHANGELIST, {"status__exact": INPUT_REQUIRED}).content.decode()
    assert listed_tools(only_waiting) == ["waiting_job"]


def test_the_cancel_action_goes_through_the_tasks_cancel_transition(admin_client):
    made = tasks()
    selected = [task.pk for task in made.values()]
    response = admin_client.post(
        CHANGELIST, {"action": "cancel_tasks", "_selected_action": selected}, follow=True
    )
    assert "Cancellation asked for 3 task(s)" in response.content.decode()
    stored = {name: McpTask.objects.get(pk=task.pk) for name, task in made.items()}
    assert stored["running"].status == WORKING and stored["running"].cancel_requested
    assert stored["waiting"].status == CANCELLED
    assert stored["finished"].status == COMPLETED


def test_who_may_see_and_who_may_cancel():
    made = tasks()
    assert staff().get(CHANGELIST).status_code == 403
    viewer = staff("view_mcptask")
    page = viewer.get(CHANGELIST).content.decode()
    assert "running_job" in page and "cancel_tasks" not in page
    refused = viewer.post(
        CHANGELIST, {"action": "cancel_tasks", "_selected_action": [made["running"].pk]}
    )
    # The action is no choice of the viewer's: the list comes back, nothing asked.
    assert refused.status_code == 200 and "Cancellation asked" not in refused.content.decode()
    assert not McpTask.objects.get(pk=made["running"].pk).cancel_requested
    canceller = staff("change_mcptask")
    assert "cancel_tasks" in canceller.get(CHANGELIST).content.decode()
    assert canceller.get(reverse("admin:beammcp_django_mcptask_add")).status_code == 403


def test_the_list_links_a_task_whose_id_looks_quoted_to_its_own_page(admin_client):
    """A task id is ``token_urlsafe``: now and then it holds ``_2F`` or another of the
    admin's quoting escapes. The list's link (quoted by the admin) opens that very task."""
    task = task_store.create(
        "model:auth.user:1", "odd_id_job", {}, ttl_ms=60_000, poll_interval_ms=500
    )
    McpTask.objects.filter(pk=task.pk).update(task_id="odd_2Fid_5Fwith_3Aescapes")
    page = admin_client.get(CHANGELIST).content.decode()
    (link,) = re.findall(r'<a href="([^"]+/change/)">', page)
    detail = admin_client.get(link)
    assert detail.status_code == 200 and "odd_id_job" in detail.content.decode()


def test_a_task_s_lifetime_keeps_its_number_and_unit_on_one_line(admin_client):
    tasks()
    page = admin_client.get(CHANGELIST).content.decode()
    assert '<td class="field-ttl">60\u00a0s</td>' in page
