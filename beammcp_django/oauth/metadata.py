"""Serving the Protected Resource Metadata document (RFC 9728), where clients look for it:
``/.well-known/oauth-protected-resource`` then the resource's path, outside the MCP route and
outside the app's URLconf include (it belongs to the site's root).

The ASGI factory (``beammcp_django.asgi.get_asgi_application``) serves it when
``BEAMMCP["OAUTH"]`` is set: nothing to route. A project served through plain Django routes
``metadata_view`` at that path instead; system check ``beammcp.E137`` names a document that
neither serves. The document is public and the same for every caller: any origin may read it
(browser clients discover it cross-origin), and nothing of the request enters it.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from beammcp_django.transports.types import Receive, Scope, Send

_CORS = [(b"access-control-allow-origin", b"*")]


async def serve_metadata(document: bytes, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one request for the document: GET or HEAD 200, OPTIONS a preflight, else 405."""
    method = scope["method"]
    if method in ("GET", "HEAD"):
        status, body = 200, document
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"max-age=300")]
    elif method == "OPTIONS":
        status, body = 204, b""
        headers = [(b"access-control-allow-methods", b"GET, HEAD, OPTIONS")]
    else:
        status, body = 405, b""
        headers = [(b"allow", b"GET, HEAD, OPTIONS")]
    headers = [*headers, *_CORS, (b"content-length", str(len(body)).encode("ascii"))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})


def metadata_view(request: HttpRequest) -> HttpResponse:
    """The document as a plain Django view, for a project not served by the ASGI factory:
    ``path(".well-known/oauth-protected-resource/mcp", metadata_view)`` in the root URLconf."""
    from beammcp_django.oauth.bearer import configured_resource_server

    server = configured_resource_server()
    if server is None:
        return HttpResponse(status=404)
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        response = HttpResponse(status=405)
        response["Allow"] = "GET, HEAD, OPTIONS"
    elif request.method == "OPTIONS":
        response = HttpResponse(status=204)
        response["Access-Control-Allow-Methods"] = "GET, HEAD, OPTIONS"
    else:
        response = HttpResponse(server.document(), content_type="application/json")
        response["Cache-Control"] = "max-age=300"
    response["Access-Control-Allow-Origin"] = "*"
    return response
