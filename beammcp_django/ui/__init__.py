"""MCP Apps' Django side: a view declared as a resource rendered from a Django template
(``declaration.py``), its static assets inlined at render (``inline.py``, the
``mcp_views`` template tags). The wire is the core's (``protocol/apps.py``)."""
