// A host of MCP Apps for the browser tests: the official AppBridge (@modelcontextprotocol/
// ext-apps 2.0.4) framing one tool's view, its calls forwarded through the official SDK
// client (@modelcontextprotocol/client 2.4.0) to the server under test. The view runs in a
// sandboxed iframe (scripts only, an opaque origin) under the Content Security Policy the
// extension says a host builds from the view's _meta.ui.csp. What happens is recorded in
// window.hostLog for the test to read.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const hostLog = [];
window.hostLog = hostLog;
const record = (kind, detail) => hostLog.push({ kind, detail: detail ?? null });

// The policy of the extension's §Content Security Policy Enforcement, from the view's csp.
function policyOf(csp) {
  const list = (key, otherwise) => (csp?.[key]?.length ? csp[key].join(" ") : otherwise);
  const resources = list("resourceDomains", "");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src 'self' ${list("connectDomains", "")}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `frame-src ${list("frameDomains", "'none'")}`,
    "object-src 'none'",
    `base-uri ${list("baseUriDomains", "'self'")}`,
  ].join("; ");
}

async function main() {
  const params = new URLSearchParams(location.search);
  const client = new Client({ name: "beammcp-apps-test-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(params.get("mcp"))));
  const { tools } = await client.listTools();
  const tool = tools.find((entry) => entry.name === params.get("tool"));
  const uri = tool._meta.ui.resourceUri;
  const { contents } = await client.readResource({ uri });
  const view = contents[0];
  const policy = policyOf(view._meta?.ui?.csp);
  record("view", { uri, mimeType: view.mimeType, policy });

  const frame = document.createElement("iframe");
  frame.sandbox = "allow-scripts";
  frame.id = "view";
  frame.style.width = "640px";
  frame.style.height = "320px";
  frame.srcdoc = view.text.replace(
    /<head>/i,
    `<head><meta http-equiv="Content-Security-Policy" content="${policy}">`
  );
  document.body.append(frame);

  const bridge = new AppBridge(
    client,
    { name: "beammcp-apps-test-host", version: "1.0.0" },
    { serverTools: {}, logging: {} },
    { hostContext: { theme: "light", displayMode: "inline" } }
  );
  bridge.onloggingmessage = (message) => record("view-log", message);
  const args = JSON.parse(params.get("arguments") || "{}");
  bridge.oninitialized = async () => {
    record("initialized", bridge.getAppVersion());
    await bridge.sendToolInput({ arguments: args });
    const result = await client.callTool({ name: tool.name, arguments: args });
    record("tool-result", result);
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  // Every call the view makes, as it reaches the server through the bridge.
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (call, extra) => {
    record("view-call", call);
    const answer = await forward(call, extra);
    record("view-call-answer", answer);
    return answer;
  };
}

main().catch((error) => record("host-error", String(error && error.stack || error)));
