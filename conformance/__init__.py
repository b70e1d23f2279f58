"""The conformance harness: a Django project that serves the catalog the official MCP
conformance suite (``@modelcontextprotocol/conformance``) calls by name, and the scripts that
run the suite against it. See ``conformance/README.md``."""
