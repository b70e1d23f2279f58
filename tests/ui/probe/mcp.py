"""A view whose script tries, at run time, a connection its csp does not declare (the URL is
computed, so no startup check sees it: the host's policy is what stops it), and reports the
browser's verdict to the host as a log message."""

from __future__ import annotations

from beammcp_django import mcp


@mcp.site.register
class CspProbe(mcp.UiResource):
    uri = "ui://probe/csp"
    name = "csp-probe"
    template_name = "probe/probe.html"
    csp = {"connectDomains": ["https://declared.example.com"]}


@mcp.site.register
class ProbeCsp(mcp.Tool):
    name = "probe_csp"
    meta = {"ui": {"resourceUri": "ui://probe/csp"}}

    def call(self, arguments, context):
        return "the probe's view reports what its policy blocked"
