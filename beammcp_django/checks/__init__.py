"""System checks: a malformed catalog or setting fails ``manage.py check`` and every command
that runs checks (``runserver``, ``mcp_serve``, ``mcp_stdio``), naming the entry and the
offending key. One module a family (``settings``, ``entries``, ``endpoint``), each
registering its checks when it is imported (``apps.py`` imports them); every id comes from
the one table, ``ids``.
"""
