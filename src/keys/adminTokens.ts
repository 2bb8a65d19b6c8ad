// The operator's admin tokens (ADMIN_TOKEN): who holds one may use the admin API. A presented token is compared
// with every configured one, each as a fixed-length hash in constant time, so neither a near miss nor which
// entry matched shows in the timing.
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

export class AdminTokens {
  private readonly entries: { name: string; hash: Buffer }[];

  /** `configured`: "token" (named "admin") or "name:token" entries. */
  constructor(configured: readonly string[]) {
    this.entries = configured.map((entry) => {
      const at = entry.indexOf(":");
      return at > 0 ? { name: entry.slice(0, at), hash: digest(entry.slice(at + 1)) } : { name: "admin", hash: digest(entry) };
    });
  }

  /** Whether any token is configured (the admin API is served only then). */
  get enabled(): boolean {
    return this.entries.length > 0;
  }

  /** The name of the token presented, when it is one of ours. */
  nameOf(presented: string | undefined): string | undefined {
    const hash = digest(presented ?? "");
    let name: string | undefined;
    for (const e of this.entries) if (timingSafeEqual(e.hash, hash) && name === undefined) name = e.name;
    return name;
  }
}
