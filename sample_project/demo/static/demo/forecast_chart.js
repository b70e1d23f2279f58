// The sample's forecast chart: draws get_forecast's structured result (one bar a day, its
// high in °C), and its Refresh button asks the server again through the host with the
// app-only tool refresh_forecast.
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const chart = document.getElementById("chart");
  const status = document.getElementById("status");
  const button = document.getElementById("refresh");
  const view = McpView.connect({ name: "forecast-chart", version: "1.0.0" });
  let asked = null;

  function element(name, attributes, text) {
    const node = document.createElementNS(SVG, name);
    for (const key in attributes) node.setAttribute(key, attributes[key]);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function draw(forecast) {
    const width = Number(chart.viewBox.baseVal.width);
    const height = Number(chart.viewBox.baseVal.height);
    const slot = width / forecast.days.length;
    const top = Math.max(1, ...forecast.days.map((day) => Math.abs(day.high_c)));
    chart.replaceChildren();
    forecast.days.forEach(function (day, index) {
      const bar = Math.round(((height - 40) * Math.abs(day.high_c)) / top);
      const x = index * slot + slot * 0.2;
      chart.append(
        element("rect", { x: x, y: height - 20 - bar, width: slot * 0.6, height: bar, "data-day": day.day }),
        element("text", { x: x + slot * 0.3, y: height - 24 - bar }, day.high_c + " °C"),
        element("text", { x: x + slot * 0.3, y: height - 6 }, "day " + day.day + ", " + day.condition)
      );
    });
    document.getElementById("city").textContent = forecast.city;
  }

  function shown(result, how) {
    if (result && result.structuredContent) {
      draw(result.structuredContent);
      status.textContent = how;
      button.disabled = asked === null;
    } else {
      status.textContent = "No forecast to draw.";
    }
  }

  view.onToolInput = function (params) {
    asked = params.arguments || null;
    status.textContent = "Forecast asked for " + (asked && asked.city) + "…";
  };
  view.onToolResult = function (result) {
    shown(result, "Forecast as the model received it.");
  };
  button.addEventListener("click", function () {
    button.disabled = true;
    status.textContent = "Refreshing…";
    view.callTool("refresh_forecast", asked).then(
      function (result) {
        shown(result, "Refreshed through the host.");
      },
      function (error) {
        status.textContent = "The refresh failed: " + error.message;
        button.disabled = false;
      }
    );
  });
})();
