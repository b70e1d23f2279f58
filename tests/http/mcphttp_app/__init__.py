"""A test-only Django app for the real-server HTTP tests (installed by ``tests.http_settings``).

``mcp.py`` adds a tool that watches ``context.cancelled`` and leaves marker files; ``hooks.py``
holds an authorize hook whose verdict the request's headers choose and which records what it
saw; ``plain_asgi.py`` is Django's own ASGI handler, without the MCP router in front.
"""
