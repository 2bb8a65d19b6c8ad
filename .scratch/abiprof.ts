import { parseZktBody } from "../src/transport/zkt/parseZktBody.js";
import { isReadOnlyCall } from "../src/zkt/contractAbi.js";
const big = Array.from({ length: 10_000 }, (_, i) => i % 2 ? `function f${i}(uint256 a) view returns (uint256)` : { type: "function", name: `f${i}`, stateMutability: "view", inputs: [{ type: "uint256" }] });
const text = JSON.stringify({ to: "0x" + "11".repeat(20), abi: big, method: "balanceOf", arguments: ["0x" + "11".repeat(20)] });
console.log("bytes", text.length);
for (let i = 0; i < 5; i++) {
  let t = performance.now(); const body = JSON.parse(text); const tp = performance.now() - t;
  t = performance.now(); const op = parseZktBody(body) as any; const tz = performance.now() - t;
  t = performance.now(); try { isReadOnlyCall(op.abi, op.method, 1); } catch (e) {} const ta = performance.now() - t;
  console.log({ parse: tp.toFixed(1), zod: tz.toFixed(1), abi: ta.toFixed(1) });
}
