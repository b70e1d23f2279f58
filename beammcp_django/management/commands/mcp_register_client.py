"""``manage.py mcp_register_client``: register a public OAuth client on the project's own
authorization server (django-oauth-toolkit), the kind an MCP client is.

An MCP client on a person's computer keeps no secret: it is a *public* client, its
authorization code protected by PKCE (which the MCP spec requires). The toolkit's
``createapplication`` makes one, and prints a generated client secret all the same, which
such a client never uses and a reader takes for something to keep; this command registers
the same client (authorization code, public, ``redirect_uris`` as given) with no secret at
all, and prints none. Clients that register themselves need no command: see Client ID
Metadata Documents in docs/authorization.md.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.apps import apps
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from beammcp_django.management.startup_checks import StartupChecks


class Command(StartupChecks, BaseCommand):
    help = (
        "Register a public OAuth client (authorization code with PKCE, no secret) on "
        "django-oauth-toolkit, for an MCP client that cannot keep a secret."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--client-id", required=True, help="the client's id")
        parser.add_argument("--name", default="", help="the name the consent screen shows")
        parser.add_argument(
            "--redirect-uri",
            action="append",
            required=True,
            dest="redirect_uris",
            help="where the answer is sent (repeat for several)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not apps.is_installed("oauth2_provider"):
            raise CommandError(
                "registering a client needs django-oauth-toolkit: add 'oauth2_provider' to "
                "INSTALLED_APPS"
            )
        from oauth2_provider.models import get_application_model

        model = get_application_model()
        client_id = options["client_id"]
        if model.objects.filter(client_id=client_id).exists():
            raise CommandError(f"a client with the id {client_id[:64]!r} is already registered")
        client = model(
            client_id=client_id,
            name=options["name"],
            client_type=model.CLIENT_PUBLIC,
            authorization_grant_type=model.GRANT_AUTHORIZATION_CODE,
            redirect_uris=" ".join(options["redirect_uris"]),
            client_secret="",
            hash_client_secret=False,
        )
        try:
            client.full_clean()
        except ValidationError as error:
            problems = "; ".join(f"{key}: {' '.join(v)}" for key, v in error.message_dict.items())
            raise CommandError(f"the client cannot be registered: {problems}") from None
        client.save()
        self.stdout.write(
            f"Registered the public client {client_id!r}"
            f"{f' ({client.name})' if client.name else ''}: authorization code with PKCE, "
            f"no secret; answers go to {', '.join(options['redirect_uris'])}"
        )
