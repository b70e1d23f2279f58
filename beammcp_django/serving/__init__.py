"""The hardened serving path: ``manage.py mcp_serve`` runs uvicorn with bounds of its own.

uvicorn parses HTTP/1.1 with httptools, which bounds neither the size of a request head, nor
the number of its header fields, nor how long it may take to arrive, and which drops the
authority of an absolute-form request target. ``http11`` adds those bounds to uvicorn's
httptools protocol; ``plan`` turns settings and options into one uvicorn configuration and
refuses the ones that cannot hold (several workers over process-local state).
"""
