"""``manage.py mcp_tasks purge``: delete every task past its TTL, whatever its status.

Run it from cron or a periodic job (a task past its TTL is already answered as unknown: the
purge frees its row). It prints how many it deleted, and exits non-zero only when the
database cannot be reached.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from beammcp_django import task_store


class Command(BaseCommand):
    help = "Keep the tasks extension's store: `purge` deletes every task past its TTL."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("purge", help="delete every task past its TTL")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            deleted = task_store.purge_expired()
        except DatabaseError as error:
            raise CommandError(
                f"the task store cannot be reached: {type(error).__name__}"
            ) from None
        self.stdout.write(f"purged {deleted} expired task(s)")
