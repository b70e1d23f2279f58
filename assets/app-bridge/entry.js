// The browser bundle the admin's view preview loads (beammcp_django/static/beammcp_django/
// vendor/app-bridge.js): MCP Apps' official host, AppBridge, and the official SDK client it
// forwards a view's calls through, exposed as the global McpAppBridge. Nothing of this
// project's own is in it; build.sh makes it, and a test holds the shipped file to be what
// build.sh makes from the pinned packages.
export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
export { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
