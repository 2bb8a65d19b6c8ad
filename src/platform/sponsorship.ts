// Sponsored transactions (experimental): a user signs a transaction, the key's wallet consents to sponsor it
// (EIP-191 "I consent to be a sponsor of transaction: 0x<keccak256(raw)>"), and the gateway broadcasts it.
// On a fee-charging network the sponsor first funds exactly the sender's shortfall, so the sender pays
// nothing of its own. Both transactions go through the sequencer (journal, nonce lane, retries).
import { getAddress, keccak256, Transaction, verifyMessage } from "ethers";
import { GatewayError } from "../errors.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { Access } from "../keys/access.js";
import { signMessage } from "../keys/custody/signMessage.js";
import type { Wallets } from "../keys/custody/wallets.js";
import type { Sequencer } from "../sequencer/sequencer.js";

export function consentMessage(raw: string): string {
  return `I consent to be a sponsor of transaction: ${keccak256(raw)}`;
}

export class Sponsorship {
  constructor(private readonly deps: { pool: UpstreamPool; sequencer: Sequencer; wallets: Wallets; chainId: number }) {}

  /** The key's wallet signs the consent, after the same checks the send makes. */
  async signConsent(access: Access, raw: string): Promise<{ sponsorAddress: string; signature: string; message: string }> {
    const wallet = this.sponsorWallet(access);
    this.decode(raw);
    const message = consentMessage(raw);
    return { sponsorAddress: wallet.address, signature: await signMessage(wallet, message), message };
  }

  async send(access: Access, raw: string, sponsorAddress: string, sponsorSignature: string): Promise<string> {
    const wallet = this.sponsorWallet(access);
    const tx = this.decode(raw);
    if (typeof sponsorAddress !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(sponsorAddress))
      throw invalid("sponsorAddress must be a 0x-prefixed 20-byte address");
    if (typeof sponsorSignature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(sponsorSignature))
      throw invalid("sponsorSignature must be a 65-byte 0x-hex signature");
    let signer: string;
    try {
      signer = verifyMessage(consentMessage(raw), sponsorSignature);
    } catch {
      throw invalid("sponsorSignature is not a valid signature");
    }
    if (signer !== getAddress(sponsorAddress))
      throw invalid(
        "sponsorSignature is not the sponsor's consent to this transaction " +
          '(it must sign "I consent to be a sponsor of transaction: 0x<keccak256 of the raw transaction>")',
      );
    if (getAddress(sponsorAddress) !== wallet.address) throw rejected("the sponsor is not a wallet this gateway holds for your API key");

    const { pool, sequencer } = this.deps;
    const price = tx.maxFeePerGas ?? tx.gasPrice ?? 0n;
    const cost = tx.gasLimit * price + tx.value;
    if (cost > 0n) {
      const balance = BigInt((await pool.call("eth_getBalance", [tx.from!, "pending"])) as string);
      if (balance >= cost) throw rejected("the sender is already funded: it can pay for this transaction itself, so it needs no sponsor");
      const funding = await sequencer.submit({ wallet, to: tx.from!, data: "0x", value: cost - balance, kind: "funding" });
      const receipt = await sequencer.waitForReceipt(funding.hash);
      if (receipt.status !== "0x1") throw rejected("funding the sender failed on chain");
    }
    return sequencer.submitRaw(raw);
  }

  private sponsorWallet(access: Access) {
    if (access.kind !== "key") throw rejected("sponsored transactions need an API key: the sponsor is the key's wallet");
    return this.deps.wallets.signer(access.walletIndex);
  }

  private decode(raw: string): Transaction {
    if (typeof raw !== "string" || !/^0x([0-9a-fA-F]{2})+$/.test(raw)) throw invalid("rawSignedTx must be 0x-hex bytes of a signed transaction");
    let tx: Transaction;
    try {
      tx = Transaction.from(raw);
    } catch {
      throw invalid("rawSignedTx is not a well-formed transaction");
    }
    if (!tx.signature || !tx.from) throw invalid("rawSignedTx is not signed");
    if (tx.chainId !== BigInt(this.deps.chainId)) throw invalid(`rawSignedTx is for chain id ${tx.chainId}; this network is ${this.deps.chainId}`);
    return tx;
  }
}

function invalid(message: string): GatewayError {
  return new GatewayError("invalid_params", `Invalid params: ${message}`);
}

function rejected(message: string): GatewayError {
  return new GatewayError("transaction_rejected", message, { jsonRpcCode: -32003 });
}
