"""A URLconf without the MCP endpoint, so the HTTP checks (E107, E108, E109, W002) stay quiet in
tests about other checks."""

urlpatterns: list = []
