// A contract that emits one log per call, deployed and called straight on a node from anvil's first dev
// account (not through the gateway): the log source of the filter, integrity and webhook tests.
import { Wallet } from "ethers";
import { rpc } from "./gateway.js";
import { until } from "./until.js";

export const DEV_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/** Init code returning PUSH1 0 CALLDATALOAD PUSH1 0 PUSH1 0 LOG1 STOP: LOG1 with the calldata's first word as topic. */
export const EMITTER = "0x6009600c60003960096000f3" + "60003560006000a100";

/** A call's data: the 32-byte word `n`, which becomes the log's topic. */
export const topic = (n: number): string => "0x" + n.toString(16).padStart(64, "0");

export type Send = (tx: { to?: string; data: string }) => Promise<string>;

/** Sends from the dev account to `node`, nonces counted from its pending count. */
export function devSender(node: string): Send {
  const wallet = new Wallet(DEV_KEY);
  let nonce: number | undefined;
  return async (tx) => {
    nonce ??= Number(await rpc<string>(node, "eth_getTransactionCount", [wallet.address, "pending"]));
    const raw = await wallet.signTransaction({ chainId: 20180427, nonce: nonce++, gasLimit: 200_000, gasPrice: 0, ...tx });
    return rpc<string>(node, "eth_sendRawTransaction", [raw]);
  };
}

/** The emitter deployed on `node` (once mined); its address. */
export async function deployEmitter(send: Send, node: string): Promise<string> {
  const hash = await send({ data: EMITTER });
  let address = "";
  await until(async () => {
    address = (await rpc<{ contractAddress: string } | null>(node, "eth_getTransactionReceipt", [hash]))?.contractAddress ?? "";
    return address !== "";
  });
  return address;
}
