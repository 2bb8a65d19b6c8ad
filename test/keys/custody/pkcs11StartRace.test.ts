// Replicas reaching an empty PKCS#11 token at the same moment (#66): each finds no wallet n and no callback
// root there, and each made its own, so two replicas signed one key's writes from two addresses and signed
// its webhooks with two secrets. Making them is now under a lock the replicas share (the store's), so the
// second finds what the first made. Four processes, told "go" together, after each opened the store.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { freshSchemaUrl } from "../../helpers/postgres.js";
import { softToken } from "../../helpers/softhsm.js";

const RACERS = 4;

interface Seen {
  public: string;
  seventh: string;
  callbackRoot: string;
}

describe("replicas starting at once on an empty token", () => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it("all sign as one public wallet and one wallet 7, and derive one callback root", { timeout: 60_000 }, async () => {
    const token = softToken("start-race");
    const db = await freshSchemaUrl();
    drops.push(db.drop);
    const env = {
      ...process.env,
      SIGNER: "pkcs11",
      PKCS11_LIBRARY: token.library,
      PKCS11_TOKEN_LABEL: token.tokenLabel,
      PKCS11_PIN_FILE: token.pinFile,
      DATABASE_URL: db.url,
      DATA_DIR: mkdtempSync(join(tmpdir(), "cgw-race-")),
    };
    const racers = Array.from({ length: RACERS }, () =>
      spawn(process.execPath, ["--import", "tsx", "test/helpers/tokenWalletsRacer.ts"], { env, stdio: ["pipe", "pipe", "inherit"] }),
    );
    const lines = racers.map((p) => createInterface({ input: p.stdout! })[Symbol.asyncIterator]());
    // Every racer has its store open and waits: then all go at once.
    for (const l of lines) expect((await l.next()).value).toBe("waiting");
    for (const p of racers) p.stdin!.write("go\n");
    const seen = await Promise.all(
      lines.map(async (l, i) => {
        const { value } = await l.next();
        // A racer that found another's half-made pair died: "holds wallet 7's public key but not its private key".
        expect(value, `racer ${i} ended without an answer (its error is above)`).toBeTypeOf("string");
        return JSON.parse(value as string) as Seen;
      }),
    );
    expect(new Set(seen.map((s) => s.public)).size, JSON.stringify(seen)).toBe(1);
    expect(new Set(seen.map((s) => s.seventh)).size, JSON.stringify(seen)).toBe(1);
    expect(new Set(seen.map((s) => s.callbackRoot)).size).toBe(1);
  });
});
