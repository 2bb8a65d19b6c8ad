import { startAnvil, saveState, kill9, freePort } from "../test/helpers/anvilProcess.js";
import { rpc } from "../test/helpers/gateway.js";
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const ts = process.argv[2] ? Number(process.argv[2]) : undefined;
let a = await startAnvil(port, undefined, ts);
const g0 = (await rpc<{hash:string}>(url, "eth_getBlockByNumber", ["0x0", false])).hash;
for (let round = 0; round < 4; round++) {
  await rpc(url, "anvil_mine", ["0x20"]);
  await saveState(url, `/tmp/st${round}.json`);
  await kill9(a);
  await new Promise(r => setTimeout(r, 1100));
  a = await startAnvil(port, undefined, ts, `/tmp/st${round}.json`);
  const seen = [];
  for (let i=0;i<3;i++){ seen.push((await rpc<{hash:string}>(url, "eth_getBlockByNumber", ["0x0", false])).hash === g0); await new Promise(r=>setTimeout(r,200)); }
  console.log("round", round, seen, Number(await rpc(url,"eth_blockNumber")));
}
await kill9(a);
