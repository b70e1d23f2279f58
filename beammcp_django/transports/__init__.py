"""Thin carriers around the protocol core: HTTP (ASGI) and stdio."""
