// The REST router passes an answer that is ready at once as a plain value (no promise per request), and
// renders a route's failure the same way whether the route threw or rejected.
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../src/errors.js";
import { createLogger } from "../../../src/log/logger.js";
import { createRestRouter, json, type RestInput, type RestRoute } from "../../../src/transport/http/restRouter.js";

const renderError = (err: GatewayError) => json(err.kind === "validation" ? 400 : 500, { error: err.message });
const route = (pattern: RegExp, handle: RestRoute["handle"]): RestRoute => ({ method: "POST", pattern, renderError, handle });
const input = (path: string, text = "{}"): RestInput => ({
  method: "POST",
  url: path,
  headers: {},
  remoteAddress: "127.0.0.1",
  bytes: async () => Buffer.from(text),
  text,
});

const lines: string[] = [];
const router = createRestRouter(
  [
    route(/^\/now$/, () => json(200, { at: "once" })),
    route(/^\/later$/, async () => json(200, { at: "later" })),
    route(/^\/throws$/, () => {
      throw new GatewayError("validation", "bad input, thrown");
    }),
    route(/^\/rejects$/, async () => {
      throw new GatewayError("validation", "bad input, rejected");
    }),
    route(/^\/broken$/, () => {
      throw new Error("a bug");
    }),
  ],
  1024,
  createLogger("error", {}, (line) => void lines.push(line)),
);

describe("REST router", () => {
  it("an answer ready at once comes back as a plain value, with the router's headers", () => {
    const answer = router.handle(input("/now"));
    expect(answer).not.toBeInstanceOf(Promise);
    expect(answer).toMatchObject({
      status: 200,
      body: '{"at":"once"}',
      headers: { "content-type": "application/json", "x-request-id": expect.stringMatching(/^[0-9a-f-]{36}$/) },
    });
  });

  it("an async route's answer comes back as a promise of the same shape", async () => {
    const answer = router.handle(input("/later"));
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toMatchObject({ status: 200, body: '{"at":"later"}', headers: { "content-type": "application/json" } });
  });

  it("a route that throws and one that rejects are rendered alike; an internal error is logged, not shown", async () => {
    expect(await router.handle(input("/throws"))).toMatchObject({ status: 400, body: JSON.stringify({ error: "bad input, thrown" }) });
    expect(await router.handle(input("/rejects"))).toMatchObject({ status: 400, body: JSON.stringify({ error: "bad input, rejected" }) });
    const broken = await router.handle(input("/broken"));
    expect(broken.status).toBe(500);
    expect(broken.body).not.toContain("a bug");
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; error: string });
    expect(logged).toContainEqual(expect.objectContaining({ msg: "request failed", error: expect.stringContaining("a bug") }));
  });

  it("a literal path and a pattern path answer alike: first matching route wins, 405 for another method, 404 for none", async () => {
    const routes: RestRoute[] = [
      { method: "GET", pattern: /^\/same$/, renderError, handle: () => json(200, { by: "literal GET" }) },
      { method: "POST", pattern: /^\/(s[a-z]+)$/, renderError, handle: (req) => json(200, { by: "pattern", params: req.params }) },
      { method: "POST", pattern: /^\/same$/, renderError, handle: () => json(200, { by: "literal POST" }) },
    ];
    const r = createRestRouter(routes, 1024, createLogger("error"));
    const call = async (method: string, path: string) =>
      await r.handle({ method, url: path, headers: {}, remoteAddress: "127.0.0.1", bytes: async () => Buffer.alloc(0) });
    // The pattern route comes before the literal POST route, so it answers /same, as the regex loop would.
    expect(JSON.parse((await call("POST", "/same")).body!)).toEqual({ by: "pattern", params: ["same"] });
    expect(JSON.parse((await call("GET", "/same")).body!)).toEqual({ by: "literal GET" });
    expect((await call("PUT", "/same")).status).toBe(405);
    expect((await call("GET", "/nothing-here")).status).toBe(404);
    expect((await call("DELETE", "/now-not-routed")).status).toBe(404);
  });
});
