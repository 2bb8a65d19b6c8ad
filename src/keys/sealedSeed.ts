// The master seed sealed on disk: DATA_DIR/master-seed holds the phrase encrypted (AES-256-GCM) under a key
// kept elsewhere (a key file, or one derived inside a PKCS#11 token), so the data directory or a backup of it
// alone opens no wallet. A file of this shape without its key refuses to start, saying what is missing.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const MARK = "chain-gateway sealed master seed v1";

export interface Sealer {
  /** What sealed it, as an operator names it ("the key file …", "the PKCS#11 token …"). */
  readonly name: string;
  key(): Promise<Buffer>;
}

export function isSealed(fileText: string): boolean {
  return fileText.startsWith(MARK);
}

/** The file's text: the mark, how it was sealed, and iv ‖ tag ‖ ciphertext in base64. */
export function seal(phrase: string, key: Buffer, how: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(phrase, "utf8"), cipher.final()]);
  return `${MARK}\nsealed by: ${how}\n${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}\n`;
}

export function unseal(fileText: string, key: Buffer, file: string): string {
  const lines = fileText.trim().split("\n");
  const raw = Buffer.from(lines.at(-1) ?? "", "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    throw new Error(`${file} is sealed (${lines[1] ?? "by an unknown key"}) and the key given does not open it`);
  }
}

/** What a sealed file says sealed it. */
export function sealedBy(fileText: string): string {
  return fileText.split("\n")[1]?.replace(/^sealed by: /, "") ?? "an unknown key";
}
