// ConfigReloader itself: a part that throws while taking a reloaded configuration does not stop the others
// from taking it (they would be left on the old settings while the rest ran on the new), and the reload says
// so (outcome "partial", the failure named).
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/config.js";
import { ConfigReloader, keyedConfig } from "../../src/config/reload.js";
import { GatewayError } from "../../src/errors.js";

describe("ConfigReloader", () => {
  it("tells every part even after one throws, and reports the reload as partial", () => {
    const before = keyedConfig(defaultConfig());
    const outcomes: string[] = [];
    const reloader = new ConfigReloader(
      before,
      () => ({ ...before, logLevel: "debug" }),
      (o) => outcomes.push(o),
    );
    const levels: string[] = [];
    reloader.onReload(() => {
      throw new Error("the pool refused it");
    });
    reloader.onReload((next) => levels.push(next.logLevel));
    let err: unknown;
    try {
      reloader.reload();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).message).toContain("the pool refused it");
    expect(levels).toEqual(["debug"]);
    expect(outcomes).toEqual(["partial"]);
  });
});
