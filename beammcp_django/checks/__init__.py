"""System checks: a malformed catalog or setting fails ``manage.py check`` and every command
that runs checks (``runserver``, ``mcp_serve``, ``mcp_stdio``), naming the entry and the
offending key. One module a family (``settings``, ``entries``, ``endpoint``); every id comes
from the one table, ``ids``. Importing this package registers them all (``apps.py``).
"""

from beammcp_django.checks import endpoint, entries, settings

__all__ = ["endpoint", "entries", "settings"]
