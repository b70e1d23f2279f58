"""``manage.py mcp_tasks purge|reap``: keep the tasks extension's store.

``purge`` deletes every task past its TTL, whatever its status (a task past its TTL is
already answered as unknown: the purge frees its row). ``reap`` enqueues again every working
task whose worker died (its lease ran out) and that nobody polls (a poll does the same for
its own task); the next run retries it or, past ``TASKS['MAX_ATTEMPTS']``, fails it. Run both
from cron or a periodic job. Each prints how many tasks it touched, and exits non-zero only
when the database cannot be reached.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from beammcp_django.management.startup_checks import StartupChecks
from beammcp_django.tasks import runner as task_runner
from beammcp_django.tasks import store as task_store


class Command(StartupChecks, BaseCommand):
    help = (
        "Keep the tasks extension's store: `purge` deletes every task past its TTL, `reap` "
        "runs again the working tasks whose worker died."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("purge", help="delete every task past its TTL")
        actions.add_parser("reap", help="run again the working tasks whose lease ran out")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["action"] == "reap":
                self.stdout.write(f"enqueued {task_runner.reap()} stale task(s) again")
            else:
                self.stdout.write(f"purged {task_store.purge_expired()} expired task(s)")
        except DatabaseError as error:
            raise CommandError(
                f"the task store cannot be reached: {type(error).__name__}"
            ) from None
