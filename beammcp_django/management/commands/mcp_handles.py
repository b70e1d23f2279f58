"""``manage.py mcp_handles purge``: delete every server-minted handle past its end (idle or
absolute). An expired handle is already answered as unknown: the purge frees its row. Run it
from cron, or enqueue ``beammcp_django.tasks.handle_purge.purge_handles`` where a worker of Django's
Tasks framework runs. Prints how many it deleted; exits non-zero only when the database
cannot be reached."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError
from django.utils import timezone

from beammcp_django.handles import store
from beammcp_django.management.startup_checks import StartupChecks


class Command(StartupChecks, BaseCommand):
    help = "Keep the server-minted handles' store: `purge` deletes every handle past its end."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("purge", help="delete every handle past its end")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            self.stdout.write(f"purged {store.purge(timezone.now())} expired handle(s)")
        except DatabaseError as error:
            raise CommandError(
                f"the handle store cannot be reached: {type(error).__name__}"
            ) from None
