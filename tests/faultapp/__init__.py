"""A test-only Django app whose MCP catalog misbehaves on purpose (see ``mcp.py``).

Installed only by ``tests.stdio_settings``; the sample project never loads it.
"""
