// Wallets whose secp256k1 keys are generated inside a PKCS#11 token, sensitive and never extractable: the
// gateway holds handles and public keys only. Wallet n is the key pair labelled `chain-gateway wallet n` (its
// CKA_ID the 20-byte address), found again by label after a restart and by any replica sharing the token.
// Signing runs on koffi's worker threads, one operation per session at a time, so the event loop only waits
// for the answer.
import { computeAddress, getAddress, hexlify } from "ethers";
import type { Logger } from "../../../log/logger.js";
import type { Exclusive } from "../../../store/exclusive.js";
import { recoverPublicKey } from "../../../sequencer/secp256k1.js";
import type { RecoverableSignature, TxSigner } from "../../../sequencer/txSigner.js";
import { PUBLIC_SIGNER_INDEX, type Wallets } from "../wallets.js";
import { CKA, CKM, CKO, type Cryptoki } from "./cryptoki.js";
import { openTokenSession, type TokenOptions, tokenHmac, tokenLock } from "./tokenSession.js";

/** secp256k1's OID as CKA_EC_PARAMS (DER). */
const SECP256K1 = Buffer.from("06052b8104000a", "hex");
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_ORDER = ORDER >> 1n;
const CALLBACK_ROOT_LABEL = "chain-gateway callback root";
export const walletLabel = (index: number): string => `chain-gateway wallet ${index}`;

export class TokenWallets implements Wallets {
  private readonly signers = new Map<number, TxSigner>();
  private readonly creating = new Map<number, Promise<void>>();
  private readonly idle: number[];
  private readonly waiting: ((session: number) => void)[] = [];
  readonly callbackRoot: string;

  private constructor(
    private readonly ck: Cryptoki,
    /** For finding and making keys (on the event loop: rare, and quick). */
    private readonly admin: number,
    sessions: number[],
    callbackRoot: string,
    private readonly log: Logger,
    /** Finding-or-making wallet n, one process at a time among those sharing the store (replicas). */
    private readonly exclusive: (load: () => void) => Promise<void>,
  ) {
    this.idle = sessions;
    this.callbackRoot = callbackRoot;
  }

  static async open(o: TokenOptions & { sessions: number; exclusive: Exclusive }, log: Logger): Promise<TokenWallets> {
    const lock = tokenLock(o.tokenLabel);
    const { ck, slot, pin, session: admin } = await o.exclusive(lock, () => openTokenSession(o));
    const sessions = Array.from({ length: o.sessions }, () => ck.openSession(slot, pin));
    // Callback secrets derive from an HMAC key made in the token: what leaves it is this one MAC, not the key.
    const root = await o.exclusive(lock, () => tokenHmac(ck, admin, CALLBACK_ROOT_LABEL, "chain-gateway callback secrets v1"));
    const exclusive = (load: () => void) => o.exclusive(lock, load);
    const wallets = new TokenWallets(ck, admin, sessions, hexlify(root), log, exclusive);
    await wallets.ready(PUBLIC_SIGNER_INDEX);
    return wallets;
  }

  signer(index: number): TxSigner {
    const signer = this.signers.get(index);
    if (!signer) throw new Error(`wallet ${index} is not ready in this process`);
    return signer;
  }

  ready(index: number): void | Promise<void> {
    if (this.signers.has(index)) return;
    let making = this.creating.get(index);
    if (!making) {
      making = this.exclusive(() => this.load(index)).finally(() => this.creating.delete(index));
      this.creating.set(index, making);
    }
    return making;
  }

  async byAddress(address: string): Promise<TxSigner | undefined> {
    for (const signer of this.signers.values()) if (signer.address === address) return signer;
    const [key] = this.ck.find(this.admin, [
      [CKA.CLASS, CKO.PRIVATE_KEY],
      [CKA.ID, Buffer.from(address.slice(2), "hex")],
    ]);
    if (key === undefined) return undefined;
    const label = this.ck.attribute(this.admin, key, CKA.LABEL);
    const index = typeof label === "string" ? Number.NaN : Number(label.toString().replace("chain-gateway wallet ", ""));
    if (!Number.isInteger(index)) return undefined;
    await this.ready(index);
    return this.signers.get(index);
  }

  close(): void {
    // Sessions end with the process; the module stays loaded (a second C_Initialize is refused by some modules).
  }

  /**
   * Wallet n's key pair from the token, made there when it has none (one process at a time: `exclusive`).
   * Were there two (made before that lock), every process takes the pair with the lowest address.
   */
  private load(index: number): void {
    const label = Buffer.from(walletLabel(index));
    let pubs = this.ck.find(this.admin, [
      [CKA.CLASS, CKO.PUBLIC_KEY],
      [CKA.LABEL, label],
    ]);
    if (pubs.length === 0) pubs = [this.make(index, label)];
    const points = new Map(pubs.map((p) => pointOf(this.ck, this.admin, p)).map((point) => [addressOfPoint(point), point]));
    const address = [...points.keys()].sort()[0]!;
    const [key] = this.ck.find(this.admin, [
      [CKA.CLASS, CKO.PRIVATE_KEY],
      [CKA.ID, Buffer.from(address.slice(2), "hex")],
    ]);
    if (key === undefined) throw new Error(`the token holds wallet ${index}'s public key but not its private key (yet)`);
    const publicKey = points.get(address)!;
    this.signers.set(index, { address, signDigest: (digest) => this.signDigest(key, publicKey, digest) });
  }

  private make(index: number, label: Buffer): number {
    const made = this.ck.generateKeyPair(
      this.admin,
      CKM.EC_KEY_PAIR_GEN,
      [
        [CKA.EC_PARAMS, SECP256K1],
        [CKA.TOKEN, true],
        [CKA.VERIFY, true],
        [CKA.LABEL, label],
      ],
      [
        [CKA.TOKEN, true],
        [CKA.PRIVATE, true],
        [CKA.SENSITIVE, true],
        [CKA.EXTRACTABLE, false],
        [CKA.SIGN, true],
        [CKA.LABEL, label],
      ],
    );
    // The address as CKA_ID: the private key is found by it, and journaled writes name their signer by it.
    const id = Buffer.from(addressOfPoint(pointOf(this.ck, this.admin, made.pub)).slice(2), "hex");
    this.ck.setAttributes(this.admin, made.pub, [[CKA.ID, id]]);
    this.ck.setAttributes(this.admin, made.priv, [[CKA.ID, id]]);
    this.log.info("wallet made in the PKCS#11 token", { index, address: getAddress(hexlify(id)) });
    return made.pub;
  }

  private async signDigest(key: number, publicKey: Buffer, digest: Uint8Array): Promise<RecoverableSignature> {
    const session = await this.session();
    let raw: Buffer;
    try {
      raw = await this.ck.sign(session, key, CKM.ECDSA, digest, 64);
    } finally {
      this.release(session);
    }
    const signature = lowS(raw);
    // The token gives r and s; which of the two public keys they recover to says v (compared as bytes).
    for (const recid of [0, 1]) {
      const candidate = { signature, recid };
      if (publicKey.equals(recoverPublicKey(digest, candidate))) return candidate;
    }
    throw new Error(`the token's signature does not recover to ${addressOfPoint(publicKey)}`);
  }

  private session(): number | Promise<number> {
    const s = this.idle.pop();
    if (s !== undefined) return s;
    return new Promise<number>((resolve) => this.waiting.push(resolve));
  }

  private release(session: number): void {
    const next = this.waiting.shift();
    if (next) next(session);
    else this.idle.push(session);
  }
}

/** s in the lower half of the order, as Ethereum requires (EIP-2). */
function lowS(raw: Buffer): Uint8Array {
  const s = BigInt(`0x${raw.subarray(32, 64).toString("hex")}`);
  if (s <= HALF_ORDER) return raw;
  const out = Buffer.from(raw);
  Buffer.from((ORDER - s).toString(16).padStart(64, "0"), "hex").copy(out, 32);
  return out;
}

/** A public key object's uncompressed point (65 bytes, 04 x y); CKA_EC_POINT is it wrapped in DER (04 41 …). */
function pointOf(ck: Cryptoki, session: number, pub: number): Buffer {
  const point = ck.attribute(session, pub, CKA.EC_POINT);
  if (point === "sensitive") throw new Error("the token will not show a public key");
  return point.length === 67 && point[0] === 0x04 && point[1] === 0x41 ? point.subarray(2) : point;
}

const addressOfPoint = (point: Uint8Array): string => getAddress(computeAddress(hexlify(point)));
