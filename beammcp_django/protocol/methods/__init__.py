"""The MCP methods, one family a module: each module holds its family's handlers and the
table naming which method each serves, at which revision. ``server.py`` routes by those
tables; ``base.py`` is what every family needs of the server."""
