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
<div class="row"><input id="usage-key" size="50" placeholder="cgw_… (your API key)"><button id="show-usage">Show usage</button></div>
<div id="usage-out" hidden>
<p id="usage-totals"></p>
<p class="muted">Last 24 hours, by the hour: <span style="color:#3b6fd6">■ requests</span> <span style="color:#d6803b">■ writes</span></p>
<svg id="usage-chart" width="720" height="140" role="img" aria-label="requests and writes per hour"></svg>
<pre id="usage-limits"></pre>
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
$("show-usage").addEventListener("click", async () => {
  const key = $("usage-key").value.trim();
  const res = await fetch("/zgt/" + encodeURIComponent(key) + "/usage");
  const u = await res.json();
  $("usage-out").hidden = false;
  if (!res.ok) { $("usage-totals").textContent = u.error || "HTTP " + res.status; $("usage-chart").replaceChildren(); return; }
  $("usage-totals").textContent = "Requests: " + u.requests.minute + " this minute, " + u.requests.day + " today, " + u.requests.month +
    " in 30 days · Writes: " + u.writes.day + " today, " + u.writes.month + " in 30 days";
  $("usage-limits").textContent = JSON.stringify({ limits: u.limits, resets: u.resets }, null, 2);
  // One pair of bars an hour, scaled to the busiest hour.
  const svg = $("usage-chart"), ns = "http://www.w3.org/2000/svg", w = 30, h = 120;
  const top = Math.max(1, ...u.hourly.map((x) => Math.max(x.requests, x.writes)));
  svg.replaceChildren();
  u.hourly.forEach((x, i) => {
    [["requests", "#3b6fd6", 0], ["writes", "#d6803b", 13]].forEach(([k, color, dx]) => {
      const r = document.createElementNS(ns, "rect"), bh = Math.round((x[k] / top) * h);
      r.setAttribute("x", String(i * w + dx)); r.setAttribute("y", String(h - bh)); r.setAttribute("width", "12");
      r.setAttribute("height", String(bh)); r.setAttribute("fill", color); r.setAttribute("class", "bar-" + k);
      r.dataset.value = String(x[k]);
      const t = document.createElementNS(ns, "title"); t.textContent = x.hour + ": " + x[k] + " " + k; r.append(t);
      svg.append(r);
    });
  });
});
$("lookup").addEventListener("click", async () => {
  const res = await fetch("/zkt/transactions/" + encodeURIComponent($("queue-id").value));
  $("status-out").textContent = JSON.stringify(await res.json(), null, 2);
});
</script>
</body></html>`;
}
