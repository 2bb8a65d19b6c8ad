// Dev-chain money (anvil_setBalance), on the embedded chain only: the gateway's signers are topped up before
// they write, and a caller-signed transaction's fee dust is credited to an account that cannot pay it, so
// default client settings work from unfunded accounts. Never value: a transfer the account cannot cover is
// still refused by the node.
import type { Transaction } from "ethers";
import type { JsonValue } from "../errors.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";

const DEV_BALANCE = 10n ** 24n; // 1,000,000 ether of dev-chain money
/** Most fees credited to one caller-signed transaction on an embedded zero-fee chain (0.001 ether). */
const FEE_DUST_MAX = 10n ** 15n;

export function toQuantity(n: bigint): JsonValue {
  return "0x" + n.toString(16);
}

/** Sets a signer's balance to DEV_BALANCE when it has less than half of it. */
export async function topUpSigner(pool: UpstreamPool, address: string): Promise<void> {
  const balance = BigInt((await pool.call("eth_getBalance", [address, "latest"])) as string);
  if (balance < DEV_BALANCE / 2n) await pool.call("anvil_setBalance", [address, toQuantity(DEV_BALANCE)]);
}

/**
 * Credits what the transaction's fees need, ten times over (so the next few from the same account need no
 * credit), when the account has its value but not the fees, and the fees are dust (FEE_DUST_MAX).
 */
export async function creditFeeDust(pool: UpstreamPool, from: string, tx: Transaction): Promise<void> {
  const fees = tx.gasLimit * (tx.maxFeePerGas ?? tx.gasPrice ?? 0n);
  if (fees === 0n || fees > FEE_DUST_MAX) return;
  const balance = BigInt((await pool.call("eth_getBalance", [from, "pending"])) as string);
  if (balance >= tx.value + fees || balance < tx.value) return;
  await pool.call("anvil_setBalance", [from, toQuantity(balance + fees * 10n)]);
}
