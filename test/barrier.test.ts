// The barrier the gateway's network starts meet at before opening their ports.
import { describe, it, expect } from "vitest";
import { barrier } from "../src/barrier.js";

describe("barrier", () => {
  it("releases every party once the last arrives", async () => {
    const b = barrier(3);
    const order: string[] = [];
    const first = b.arrive().then(() => order.push("first"));
    const second = b.arrive().then(() => order.push("second"));
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    await b.arrive();
    await Promise.all([first, second]);
    expect(order.sort()).toEqual(["first", "second"]);
  });

  it("an abort rejects those waiting and those still to come with its error; after release it does nothing", async () => {
    const b = barrier(3);
    const waiting = b.arrive();
    const err = new Error("the main network could not start");
    b.abort(err);
    await expect(waiting).rejects.toBe(err);
    await expect(b.arrive()).rejects.toBe(err);

    const done = barrier(1);
    await done.arrive();
    done.abort(new Error("too late"));
    await expect(done.arrive()).resolves.toBeUndefined();
  });
});
