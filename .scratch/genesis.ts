import { startAnvil, saveState, kill9, freePort } from "../test/helpers/anvilProcess.js";
import { rpc } from "../test/helpers/gateway.js";
import { readFileSync } from "node:fs";
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
let a = await startAnvil(port);
const g0 = (await rpc<{hash:string}>(url, "eth_getBlockByNumber", ["0x0", false])).hash;
await rpc(url, "anvil_mine", ["0x" + Number(process.argv[2]).toString(16)]);
await saveState(url, "/tmp/st.json");
const st = JSON.parse(readFileSync("/tmp/st.json","utf8"));
console.log("dump best", st.best_block_number, "blocks in dump", st.blocks?.length, "first", st.blocks?.[0]?.header?.number);
await new Promise(r => setTimeout(r, 2000));
await kill9(a);
a = await startAnvil(port, undefined, undefined, "/tmp/st.json");
for (let i=0;i<5;i++){
const g1 = (await rpc<{hash:string}>(url, "eth_getBlockByNumber", ["0x0", false]))?.hash;
console.log(g0, g1, g0===g1, Number(await rpc(url,"eth_blockNumber")));
await new Promise(r => setTimeout(r, 300));
}
await kill9(a);
