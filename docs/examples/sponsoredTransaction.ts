// Sponsor a transaction from a brand-new (unfunded) account with your API key's wallet.
//   GATEWAY_URL=http://127.0.0.1:8545 API_KEY=cgw_… npx tsx docs/examples/sponsoredTransaction.ts
import { JsonRpcProvider, Wallet } from "ethers";

const base = process.env.GATEWAY_URL ?? "http://127.0.0.1:8545";
const apiKey = process.env.API_KEY;
if (!apiKey) throw new Error("set API_KEY (get one: curl -X POST $GATEWAY_URL/portal/keys)");

const provider = new JsonRpcProvider(`${base}/zgt/${apiKey}`, undefined, { staticNetwork: true });
const { chainId } = await provider.getNetwork();
const sender = Wallet.createRandom(); // holds nothing
const fee = await provider.getFeeData();
const raw = await sender.signTransaction({
  to: "0x000000000000000000000000000000000000bEEF",
  value: 0n,
  gasLimit: 21_000n,
  nonce: 0,
  chainId,
  ...(fee.maxFeePerGas ? { type: 2, maxFeePerGas: fee.maxFeePerGas * 2n, maxPriorityFeePerGas: fee.maxPriorityFeePerGas ?? 0n } : { type: 0, gasPrice: 0n }),
});

// 1. The key's wallet consents to sponsor exactly this transaction.
const consent = (await (
  await fetch(`${base}/zgt/${apiKey}/sponsor-consent`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ rawTransaction: raw }),
  })
).json()) as { sponsorAddress: string; signature: string };
// 2. Submit it; the sponsor covers what the sender lacks.
const hash = (await provider.send("platform_sendSponsoredTransaction", [raw, consent.sponsorAddress, consent.signature])) as string;
const receipt = await provider.waitForTransaction(hash);
console.log(JSON.stringify({ hash, status: receipt?.status, sponsor: consent.sponsorAddress, sender: sender.address }));
provider.destroy();
