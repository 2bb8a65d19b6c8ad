// The developer portal page (GET /portal): get a free API key, try the three ZKT operations, look up a
// submission, see a key's usage (a chart of its last 24 hours). Plain HTML and a little vanilla JS: nothing to build, nothing to load from elsewhere.
const TOKEN = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import "@openzeppelin/contracts/token/ERC20/ERC20.sol";
contract MyToken is ERC20 {
    constructor(uint256 supply) ERC20("My Token", "MTK") { _mint(msg.sender, supply); }
}`;

const EXAMPLES = {
  message: { arguments: "Hello from the portal" },
  deploy: { code: TOKEN, arguments: ["1000000"], id: "deploy-1" },
  read: {
    to: "0x…contractAddress",
    abi: ["function totalSupply() view returns (uint256)", "function balanceOf(address) view returns (uint256)"],
    method: "totalSupply",
    arguments: [],
    id: 1,
  },
  write: {
    to: "0x…contractAddress",
    abi: ["function transfer(address to, uint256 value) returns (bool)", "event Transfer(address indexed from, address indexed to, uint256 value)"],
    method: "transfer",
    arguments: ["0x000000000000000000000000000000000000dEaD", "100"],
    wait: true,
    id: 2,
  },
};

/** `selfServiceKeys` false (PORTAL_KEYS_PER_HOUR=0): the key form is shown off, with who to ask instead. */
export function portalPage(networks: Record<string, string>, selfServiceKeys = true): string {
  const off = selfServiceKeys ? "" : " disabled";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chain-gateway portal</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d2330}
h1{margin-bottom:.2rem} h2{margin-top:2rem;border-bottom:1px solid #dde;padding-bottom:.3rem}
code,pre,textarea{font:13px/1.4 ui-monospace,monospace} pre{background:#f4f6fa;padding:.8rem;overflow:auto;border-radius:6px}
textarea{width:100%;height:14rem} input,select,button{font:inherit;padding:.35rem .6rem} button{cursor:pointer}
.row{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center;margin:.5rem 0} .muted{color:#667} .warn{color:#a40}
</style></head><body>
<h1>chain-gateway</h1>
<p class="muted">JSON-RPC and ZKT (beta) for ${Object.entries(networks)
    .map(([n, u]) => `${n} <code>${u}</code>`)
    .join(" and ")}. Docs: <a href="/zkt/docs">ZKT API</a> · <a href="/zkt/openapi.json">OpenAPI</a></p>

<h2>1. Get a free API key</h2>
${selfServiceKeys ? "" : '<p class="warn" id="keys-off">Self-service keys are off on this gateway: ask its operator for a key.</p>\n'}<div class="row"><input id="label" placeholder="label (optional)"${off}><button id="create-key"${off}>Create key</button></div>
<div id="key-out" hidden><p class="warn">Store this key now: it is shown only once.</p><pre id="key-json"></pre></div>

<h2>2. Try ZKT</h2>
<div class="row">Send to <select id="target"><option value="try-it-out">/zkt/try-it-out (shared signer)</option></select>
Examples: <button data-example="message">message</button><button data-example="deploy">ERC-20 deploy</button>
<button data-example="read">read</button><button data-example="write">write with wait</button></div>
<textarea id="body"></textarea>
<div class="row"><button id="send">Send</button><span id="status" class="muted"></span></div>
<pre id="response"></pre>

<h2>3. Transaction status</h2>
<div class="row"><input id="queue-id" size="40" placeholder="queueId"><button id="lookup">Look up</button></div>
<pre id="status-out"></pre>

<h2>4. Your key</h2>
<div class="row"><input id="usage-key" size="50" placeholder="cgw_… (your API key)"><button id="show-usage">Show usage</button>
<button id="forget-key" class="muted">Forget this key</button></div>
<p class="muted">This browser remembers the key you create or show here (its local storage only), so it need not be pasted again.</p>
<div id="usage-out" hidden>
<p id="usage-totals"></p>
<table id="usage-limits"></table>
<p class="muted">Last 24 hours, by the hour: <span style="color:#3b6fd6">■ requests</span> <span style="color:#d6803b">■ writes</span></p>
<svg id="usage-chart" width="780" height="170" role="img" aria-label="requests and writes per hour, last 24 hours"></svg>
</div>

<script>
const EXAMPLES = ${JSON.stringify(EXAMPLES)};
const $ = (id) => document.getElementById(id);
let lastContract = null;
function show(name) {
  const ex = structuredClone(EXAMPLES[name]);
  if (lastContract && ex.to) ex.to = lastContract;
  $("body").value = JSON.stringify(ex, null, 2);
}
document.querySelectorAll("[data-example]").forEach((b) => b.addEventListener("click", () => show(b.dataset.example)));
show("message");
$("create-key").addEventListener("click", async () => {
  const res = await fetch("/portal/keys", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify($("label").value ? { label: $("label").value } : {}),
  });
  const out = await res.json();
  $("key-json").textContent = JSON.stringify(out, null, 2);
  $("key-out").hidden = false;
  if (out.apiKey) {
    remember(out.apiKey);
    const o = document.createElement("option");
    o.value = out.apiKey; o.textContent = "/zkt/" + out.prefix + "… (your key, wallet " + out.walletAddress + ")";
    $("target").append(o); $("target").value = out.apiKey;
  }
});
$("send").addEventListener("click", async () => {
  $("status").textContent = "sending…";
  let body;
  try { body = JSON.parse($("body").value); } catch { $("status").textContent = "the body is not valid JSON"; return; }
  // The read/write examples before any deploy still hold the placeholder: say so rather than post it.
  if (typeof body.to === "string" && body.to.includes("…")) {
    $("status").textContent = 'deploy a contract first (the ERC-20 deploy example), or put a contract address in "to"';
    return;
  }
  const res = await fetch("/zkt/" + encodeURIComponent($("target").value), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const out = await res.json();
  $("status").textContent = "HTTP " + res.status;
  $("response").textContent = JSON.stringify(out, null, 2);
  if (out.contractAddress) lastContract = out.contractAddress;
  if (out.queueId) $("queue-id").value = out.queueId;
});
const KEY_STORE = "chain-gateway.apiKey";
function remember(key) { try { localStorage.setItem(KEY_STORE, key); } catch {} }
try { const kept = localStorage.getItem(KEY_STORE); if (kept) $("usage-key").value = kept; } catch {}
$("forget-key").addEventListener("click", () => { try { localStorage.removeItem(KEY_STORE); } catch {} $("usage-key").value = ""; $("usage-out").hidden = true; });
const inTime = (s) => (s <= 0 ? "" : s < 120 ? "in " + s + " s" : s < 7200 ? "in " + Math.round(s / 60) + " min" : "in " + Math.round(s / 3600) + " h");
function limitRow(name, used, limit, resets) {
  const tr = document.createElement("tr");
  const cells = [name, limit ? used + " of " + limit + " used" : used + " used (no limit)", limit && resets ? "resets " + inTime(resets) : ""];
  for (const c of cells) { const td = document.createElement("td"); td.textContent = c; tr.append(td); }
  return tr;
}
$("show-usage").addEventListener("click", async () => {
  const key = $("usage-key").value.trim();
  const res = await fetch("/zgt/" + encodeURIComponent(key) + "/usage");
  const u = await res.json();
  $("usage-out").hidden = false;
  if (!res.ok) { $("usage-totals").textContent = u.error || "HTTP " + res.status; $("usage-chart").replaceChildren(); $("usage-limits").replaceChildren(); return; }
  remember(key);
  $("usage-totals").textContent = "Requests: " + u.requests.minute + " this minute, " + u.requests.day + " today, " + u.requests.month +
    " in 30 days · Writes: " + u.writes.day + " today, " + u.writes.month + " in 30 days";
  $("usage-limits").replaceChildren(
    limitRow("Requests per minute", u.requests.minute, u.limits.requestsPerMinute, u.resets.requestsSeconds),
    limitRow("Writes per day", u.writes.day, u.limits.writesPerDay, u.resets.writesDaySeconds),
    limitRow("Writes per 30 days", u.writes.month, u.limits.writesPerMonth, u.resets.writesMonthSeconds),
  );
  // One pair of bars an hour, scaled to the busiest hour, on axes: counts on the left, hours below.
  const svg = $("usage-chart"), ns = "http://www.w3.org/2000/svg", w = 30, h = 120, left = 50, top0 = 10;
  const top = Math.max(1, ...u.hourly.map((x) => Math.max(x.requests, x.writes)));
  const el = (name, attrs, text) => {
    const e = document.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  };
  svg.replaceChildren(
    el("line", { x1: left, y1: top0, x2: left, y2: top0 + h, stroke: "#888", class: "axis-y" }),
    el("line", { x1: left, y1: top0 + h, x2: left + 24 * w, y2: top0 + h, stroke: "#888", class: "axis-x" }),
    el("text", { x: left - 6, y: top0 + 4, "text-anchor": "end", "font-size": 11, class: "label-y" }, String(top)),
    el("text", { x: left - 6, y: top0 + h, "text-anchor": "end", "font-size": 11, class: "label-y" }, "0"),
    el("text", { x: 12, y: top0 + h / 2, "font-size": 11, transform: "rotate(-90 12 " + (top0 + h / 2) + ")", "text-anchor": "middle" }, "per hour"),
  );
  u.hourly.forEach((x, i) => {
    [["requests", "#3b6fd6", 0], ["writes", "#d6803b", 13]].forEach(([k, color, dx]) => {
      const bh = Math.round((x[k] / top) * h);
      const r = el("rect", { x: left + i * w + dx, y: top0 + h - bh, width: 12, height: bh, fill: color, class: "bar-" + k });
      r.dataset.value = String(x[k]);
      r.append(el("title", {}, new Date(x.hour).toISOString().slice(0, 13) + ":00 UTC: " + x[k] + " " + k));
      svg.append(r);
    });
    // Every sixth hour named below its bars, in UTC.
    if (i % 6 === 0 || i === u.hourly.length - 1)
      svg.append(el("text", { x: left + i * w + 12, y: top0 + h + 16, "text-anchor": "middle", "font-size": 11, class: "label-x" }, new Date(x.hour).toISOString().slice(11, 16) + (i === u.hourly.length - 1 ? " UTC" : "")));
  });
});
$("lookup").addEventListener("click", async () => {
  const res = await fetch("/zkt/transactions/" + encodeURIComponent($("queue-id").value));
  $("status-out").textContent = JSON.stringify(await res.json(), null, 2);
});
</script>
</body></html>`;
}
