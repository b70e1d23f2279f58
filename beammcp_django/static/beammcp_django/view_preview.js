// The admin's preview of an MCP Apps view (beammcp_django/admin/view_preview.py). The
// official host (AppBridge, from vendor/app-bridge.js) frames the view through the sandbox
// proxy on the second origin and forwards the view's calls through the official SDK client,
// connected to the preview endpoint: this server's MCP endpoint, as the logged-in user.
// Every exchange is listed on the page (and kept in window.mcpPreviewLog for tests).
(() => {
  "use strict";
  const config = JSON.parse(document.getElementById("mcp-view-preview-config").textContent);
  const { AppBridge, PostMessageTransport, Client, StreamableHTTPClientTransport } = window.McpAppBridge;
  const hostInfo = { name: "beammcp-django admin preview", version: "1.0.0" };
  const element = (id) => document.getElementById(id);
  const status = element("mcp-preview-status");
  const toolSelect = element("mcp-preview-tool");
  const inputButton = element("mcp-preview-input");
  const callButton = element("mcp-preview-call");
  // Of an answer, what the page lists: enough to read, never the whole of a large one.
  const SHOWN = 2000;
  const entries = [];
  window.mcpPreviewLog = entries;

  function record(kind, detail) {
    entries.push({ kind, detail: detail ?? null });
    const item = document.createElement("li");
    item.dataset.kind = kind;
    const label = document.createElement("strong");
    label.textContent = kind;
    const text = detail === undefined ? "" : JSON.stringify(detail);
    item.append(label, " ", text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text);
    element("mcp-preview-log").append(item);
  }

  function say(text) {
    status.textContent = text;
  }

  function demandsOf(demands) {
    return demands.length ? demands.join("; ") : "nothing the declaration names";
  }

  async function allTools(client) {
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  function argumentsGiven() {
    const value = JSON.parse(element("mcp-preview-arguments").value || "{}");
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new Error("the arguments are not a JSON object");
    }
    return value;
  }

  // The browser features a view may be granted, as a frame's `allow` names them.
  const FEATURES = { camera: "camera", microphone: "microphone", geolocation: "geolocation", clipboardWrite: "clipboard-write" };
  const INITIALIZE_SECONDS = 30;

  async function readView(client) {
    try {
      const { contents } = await client.readResource({ uri: config.uri });
      const view = contents.find((item) => item.uri === config.uri);
      if (typeof view?.text === "string") return view;
      say("The endpoint answered no HTML for this view.");
    } catch (error) {
      record("view-refused", String(error.message || error));
      say(
        error.code === -32602
          ? `The endpoint does not let you read this view (it demands: ${demandsOf(config.demands)}).`
          : `The endpoint could not read this view: ${error.message || error}`
      );
    }
    return null;
  }

  async function start() {
    const client = new Client(hostInfo, {
      capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
    });
    const endpoint = new URL(config.endpoint, location.href);
    const transport = new StreamableHTTPClientTransport(endpoint, {
      requestInit: { headers: { "X-CSRFToken": config.csrfToken } },
    });
    await client.connect(transport);
    // The session ends with the page, rather than when it has been idle an hour.
    window.addEventListener("pagehide", () => {
      if (!transport.sessionId) return;
      fetch(endpoint, {
        method: "DELETE",
        keepalive: true,
        headers: { "Mcp-Session-Id": transport.sessionId, "X-CSRFToken": config.csrfToken },
      });
    });
    const view = await readView(client);
    if (view === null) return;
    record("view", { uri: view.uri, mimeType: view.mimeType, bytes: view.text.length });

    // What each tool you may use lets call it: a view calls only tools whose visibility
    // holds "app" (the page's Visibility, a host's duty).
    const visibility = new Map(
      (await allTools(client)).map((tool) => [tool.name, tool._meta?.ui?.visibility ?? ["model", "app"]])
    );
    for (const tool of config.tools) {
      const option = document.createElement("option");
      option.value = tool.name;
      option.textContent = `${tool.name} (${tool.visibility.join(", ")})`;
      option.disabled = !visibility.has(tool.name);
      toolSelect.append(option);
      if (!visibility.has(tool.name)) {
        record("tool-hidden", `${tool.name} is hidden from you: it demands ${demandsOf(tool.demands)}`);
      }
    }
    const first = config.tools.find((tool) => visibility.has(tool.name));
    if (first) toolSelect.value = first.name;

    const ui = view._meta?.ui || {};
    const sandbox = new URL(config.sandbox);
    sandbox.search = new URLSearchParams({ host: location.origin, csp: JSON.stringify(ui.csp || {}) });
    const frame = document.createElement("iframe");
    frame.id = "mcp-preview-view";
    frame.title = `The view ${config.uri}`;
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
    const granted = Object.keys(ui.permissions || {}).filter((name) => name in FEATURES);
    if (granted.length) frame.setAttribute("allow", granted.map((name) => FEATURES[name]).join("; "));
    frame.src = sandbox.href;
    element("mcp-preview-frame").append(frame);

    const bridge = new AppBridge(client, hostInfo, { serverTools: {}, logging: {} }, {
      hostContext: { theme: "light", displayMode: "inline", platform: "web" },
    });
    bridge.addEventListener("sandboxready", () => {
      bridge.sendSandboxResourceReady({ html: view.text, sandbox: "allow-scripts", csp: ui.csp, permissions: ui.permissions });
    });
    let initialized = false;
    bridge.oninitialized = () => {
      initialized = true;
      record("initialized", bridge.getAppVersion());
      say(first ? "The view is ready: send it a tool input, then a result." : "The view is ready; no tool it draws is yours to call.");
      toolSelect.disabled = !first;
      inputButton.disabled = callButton.disabled = !first;
    };
    setTimeout(() => {
      if (!initialized) say(`The view did not initialize within ${INITIALIZE_SECONDS} s: see the browser's console.`);
    }, INITIALIZE_SECONDS * 1000);
    bridge.onsizechange = ({ height }) => {
      if (typeof height === "number" && height > 0) frame.style.height = `${Math.min(height, 2000)}px`;
    };
    bridge.onloggingmessage = (message) => record("view-log", message);
    // Messages to the proxy go to its origin alone, never to whatever the frame holds.
    const proxy = { postMessage: (message) => frame.contentWindow.postMessage(message, sandbox.origin) };
    await bridge.connect(new PostMessageTransport(proxy, frame.contentWindow));
    // Every call the view makes, as the bridge forwards it (its handler is set by connect).
    const forward = bridge.oncalltool;
    bridge.oncalltool = async (call, extra) => {
      record("view-call", call);
      const allowed = visibility.get(call.name);
      if (allowed !== undefined && !allowed.includes("app")) {
        const refusal = `${call.name} is not the view's to call: its visibility leaves out "app"`;
        record("view-call-refused", refusal);
        throw new Error(refusal);
      }
      try {
        const answer = await forward(call, extra);
        record("view-call-answer", answer);
        return answer;
      } catch (error) {
        record("view-call-error", String(error.message || error));
        throw error;
      }
    };

    inputButton.addEventListener("click", () =>
      act(async () => {
        const args = argumentsGiven();
        await bridge.sendToolInput({ arguments: args });
        record("tool-input", args);
      })
    );
    callButton.addEventListener("click", () =>
      act(async () => {
        const args = argumentsGiven();
        const result = await client.callTool({ name: toolSelect.value, arguments: args });
        record("tool-result", result);
        await bridge.sendToolResult(result);
      })
    );
  }

  async function act(step) {
    try {
      await step();
    } catch (error) {
      record("error", String(error.message || error));
    }
  }

  // Nothing runs as you until you ask: the view's scripts may call tools.
  element("mcp-preview-open").addEventListener("click", (event) => {
    event.target.disabled = true;
    say("Connecting to the endpoint…");
    start().catch((error) => {
      record("error", String(error.message || error));
      say("The preview could not start: see the exchanges below.");
    });
  });
})();
