"""The app that registers the conformance suite's fixture catalog (``mcp.py``)."""
