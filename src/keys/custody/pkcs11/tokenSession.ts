// A logged-in session on the token a configuration names, and secrets derived inside it: an HMAC key made in
// the token (sensitive, never extractable) MACs a fixed message, and only that MAC leaves it.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { CKA, CKK, CKM, CKO, Cryptoki } from "./cryptoki.js";

export interface TokenOptions {
  library: string;
  tokenLabel: string;
  pinFile: string;
}

/**
 * The lock (store.exclusive) every process sharing the token takes to open it or to write to it: a process
 * opening a token (SoftHSM2's file store) while another writes a key there was seen to find it missing, or
 * to be answered CKR_GENERAL_ERROR, for the rest of its life. One name, so opening waits for writing.
 */
export const tokenLock = (label: string): string => `pkcs11 ${label}`;

export function openTokenSession(o: TokenOptions): { ck: Cryptoki; slot: number; pin: string; session: number } {
  const ck = Cryptoki.load(o.library);
  const slot = ck.slotOf(o.tokenLabel);
  if (slot === undefined) throw new Error(`no PKCS#11 token labelled "${o.tokenLabel}" in ${o.library}`);
  const pin = readFileSync(o.pinFile, "utf8").trim();
  return { ck, slot, pin, session: ck.openSession(slot, pin) };
}

/**
 * HMAC-SHA256 of `message` under the token's secret key labelled `label`, made there on first use (by one
 * process at a time: callers hold the store's lock). Were there two (made before that lock), every process
 * takes the one with the lowest CKA_ID, so all derive the same secret.
 */
export function tokenHmac(ck: Cryptoki, session: number, label: string, message: string): Promise<Buffer> {
  const found = ck.find(session, [
    [CKA.CLASS, CKO.SECRET_KEY],
    [CKA.LABEL, Buffer.from(label)],
  ]);
  const idOf = (key: number) => {
    const id = ck.attribute(session, key, CKA.ID);
    return typeof id === "string" ? "" : id.toString("hex");
  };
  const key =
    found.map((k) => ({ k, id: idOf(k) })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0]?.k ??
    ck.generateKey(session, CKM.GENERIC_SECRET_KEY_GEN, [
      [CKA.CLASS, CKO.SECRET_KEY],
      [CKA.KEY_TYPE, CKK.GENERIC_SECRET],
      [CKA.VALUE_LEN, 32],
      [CKA.TOKEN, true],
      [CKA.PRIVATE, true],
      [CKA.SENSITIVE, true],
      [CKA.EXTRACTABLE, false],
      [CKA.SIGN, true],
      [CKA.LABEL, Buffer.from(label)],
      [CKA.ID, randomBytes(16)],
    ]);
  return ck.sign(session, key, CKM.SHA256_HMAC, Buffer.from(message), 32);
}
