// Key lookups are cached for LOOKUP_CACHE_MS: a key revoked through the same ApiKeys is refused at once; one
// revoked by another process sharing the store (here a second ApiKeys on the same database) within that time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStores, type Stores } from "../../src/store/openStores.js";
import { ApiKeys, LOOKUP_CACHE_MS } from "../../src/keys/apiKeys.js";
import { seedWallets } from "../../src/keys/custody/seedWallets.js";
import { MasterSeed } from "../../src/keys/masterSeed.js";

describe("API key lookup cache", () => {
  let stores: Stores;
  let gateway: ApiKeys;
  let otherProcess: ApiKeys;
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gw-keys-"));
    stores = await openStores({ dataDir });
    const seed = seedWallets(MasterSeed.load(dataDir, {}));
    gateway = new ApiKeys(stores.keys, seed);
    otherProcess = new ApiKeys(stores.keys, seed);
  });
  afterAll(() => stores?.close());

  it("revoked here: refused at once", async () => {
    const { apiKey, info } = await gateway.create();
    expect((await gateway.authenticate(apiKey)).kind).toBe("key");
    await gateway.revoke(info.id);
    await expect(gateway.authenticate(apiKey)).rejects.toThrow(/revoked/);
  });

  it("revoked by another process: refused within the cache time", async () => {
    const { apiKey, info } = await gateway.create();
    expect((await gateway.authenticate(apiKey)).kind).toBe("key");
    await otherProcess.revoke(info.id);
    await new Promise((r) => setTimeout(r, LOOKUP_CACHE_MS + 50));
    await expect(gateway.authenticate(apiKey)).rejects.toThrow(/revoked/);
  });

  it("unknown keys are never cached: a key created elsewhere works at once", async () => {
    const { apiKey } = await otherProcess.create();
    expect((await gateway.authenticate(apiKey)).kind).toBe("key");
    await expect(gateway.authenticate(apiKey + "x")).rejects.toThrow(/unknown API key/);
  });
});
