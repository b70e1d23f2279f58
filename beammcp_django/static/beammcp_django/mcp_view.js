// The view's side of MCP Apps (io.modelcontextprotocol/ui, protocol 2026-01-26), for a
// view rendered by beammcp-django: JSON-RPC over postMessage with the host that framed it.
// Inline it in the view's template ({% inline_script "beammcp_django/mcp_view.js" %}):
//
//   const view = McpView.connect({ name: "forecast-chart", version: "1.0.0" });
//   view.onToolInput = (params) => { ... };    // ui/notifications/tool-input
//   view.onToolResult = (result) => { ... };   // ui/notifications/tool-result
//   const answer = await view.callTool("refresh_forecast", { city: "oslo" });
//
// Only messages from the parent window are read; a request the host does not answer within
// REQUEST_TIMEOUT_MS rejects. The host context and capabilities from ui/initialize are kept
// on view.host (the context merged with each change the host announces), and the document's
// size is announced as it changes. Messages are posted to the parent with the target "*":
// a view's frame has an opaque origin, and which parent is its host is the host's to say.
(function () {
  "use strict";
  const PROTOCOL_VERSION = "2026-01-26";
  const REQUEST_TIMEOUT_MS = 30000;

  function connect(appInfo, appCapabilities) {
    const pending = new Map();
    let nextId = 1;
    const view = {
      host: null,
      onToolInput: null,
      onToolInputPartial: null,
      onToolResult: null,
      onToolCancelled: null,
      onHostContextChanged: null,
      onTeardown: null,
      ready: null,
      request: request,
      notify: notify,
      callTool: function (name, args) {
        return request("tools/call", { name: name, arguments: args || {} });
      },
      log: function (level, data) {
        notify("notifications/message", { level: level, data: data });
      },
    };

    function post(message) {
      window.parent.postMessage(message, "*");
    }

    function notify(method, params) {
      post({ jsonrpc: "2.0", method: method, params: params || {} });
    }

    function request(method, params) {
      const id = nextId++;
      post({ jsonrpc: "2.0", id: id, method: method, params: params || {} });
      return new Promise(function (resolve, reject) {
        const timer = setTimeout(function () {
          pending.delete(id);
          reject(new Error(method + " was not answered within " + REQUEST_TIMEOUT_MS + " ms"));
        }, REQUEST_TIMEOUT_MS);
        pending.set(id, { resolve: resolve, reject: reject, timer: timer });
      });
    }

    function answer(id, result) {
      post({ jsonrpc: "2.0", id: id, result: result });
    }

    const notifications = {
      "ui/notifications/tool-input": "onToolInput",
      "ui/notifications/tool-input-partial": "onToolInputPartial",
      "ui/notifications/tool-result": "onToolResult",
      "ui/notifications/tool-cancelled": "onToolCancelled",
      "ui/notifications/host-context-changed": "onHostContextChanged",
    };

    window.addEventListener("message", function (event) {
      if (event.source !== window.parent) return;
      const message = event.data;
      if (!message || message.jsonrpc !== "2.0") return;
      if (message.method === undefined && pending.has(message.id)) {
        const waiting = pending.get(message.id);
        pending.delete(message.id);
        clearTimeout(waiting.timer);
        if (message.error) {
          waiting.reject(Object.assign(new Error(message.error.message), message.error));
        } else {
          waiting.resolve(message.result);
        }
        return;
      }
      if (message.id !== undefined && message.method !== undefined) {
        // A request of the host's: teardown and ping are answered; anything else is not
        // served by this view.
        if (message.method === "ui/resource-teardown") {
          // The host waits for this answer before it removes the frame: it always gets one.
          new Promise(function (resolve) {
            resolve(view.onTeardown && view.onTeardown(message.params));
          }).then(
            function () {
              answer(message.id, {});
            },
            function (error) {
              post({
                jsonrpc: "2.0",
                id: message.id,
                error: { code: -32603, message: "teardown failed: " + String(error) },
              });
            }
          );
        } else if (message.method === "ping") {
          answer(message.id, {});
        } else {
          post({
            jsonrpc: "2.0",
            id: message.id,
            error: { code: -32601, message: "the view does not serve " + message.method },
          });
        }
        return;
      }
      if (message.method === "ui/notifications/host-context-changed" && view.host) {
        // A change carries only what changed: the context kept is the merged one.
        view.host.hostContext = Object.assign({}, view.host.hostContext, message.params);
      }
      const handler = notifications[message.method];
      if (handler && typeof view[handler] === "function") view[handler](message.params);
    });

    // The document's size, told to the host whenever it changes (it sizes the frame).
    function sendSize() {
      const root = document.documentElement;
      notify("ui/notifications/size-changed", {
        width: Math.ceil(root.scrollWidth),
        height: Math.ceil(root.scrollHeight),
      });
    }

    view.ready = request("ui/initialize", {
      appInfo: appInfo,
      appCapabilities: appCapabilities || {},
      protocolVersion: PROTOCOL_VERSION,
    }).then(function (result) {
      view.host = result;
      notify("ui/notifications/initialized", {});
      sendSize();
      if (typeof ResizeObserver === "function") new ResizeObserver(sendSize).observe(document.documentElement);
      return result;
    });
    return view;
  }

  window.McpView = { connect: connect, PROTOCOL_VERSION: PROTOCOL_VERSION };
})();
