"""A URLconf without the MCP endpoint, so the HTTP checks (E018, E019, W002) stay quiet in
tests about other checks."""

urlpatterns: list = []
