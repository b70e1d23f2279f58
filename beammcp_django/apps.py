from __future__ import annotations

from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class BeamMcpConfig(AppConfig):
    name = "beammcp_django"
    verbose_name = "MCP server"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from beammcp_django.checks import (  # noqa: F401 - registers them
            authorization_server,
            endpoint,
            entries,
            handles,
            settings,
            views,
        )
        from beammcp_django.credential_signals import connect

        # A revoked token, a deactivated user, a permission taken away end the principal's
        # streams and cached grants at once (credentials.py).
        connect()

        # Import every installed app's `mcp` module so its @site.register lines run.
        autodiscover_modules("mcp")
