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

  it("a path is tried against the routes of its first segment and those without one, and answers as the whole list in order would", async () => {
    const named = (name: string, method: RestRoute["method"], pattern: RegExp) => ({
      name,
      route: { method, pattern, renderError, handle: () => json(200, { by: name }) },
    });
    const table = [
      named("zkt GET", "GET", /^\/zkt\/transactions\/([^/]+)$/),
      named("zgt bare", "POST", /^\/zgt\/?$/),
      named("zkt keyed", "POST", /^\/zkt\/([^/]+)\/?$/),
      named("zgt keyed", "POST", /^\/zgt\/([^/]+)\/?$/),
      named("either", "POST", /^\/(?:one|two)\/x$/),
      named("alternation", "POST", /^\/three\/x$|^\/four\/x$/),
      named("case", "POST", /^\/five\/x$/i),
      named("bare key", "POST", /^\/([A-Za-z0-9_-]{16,128})\/?$/),
      named("zkt late", "POST", /^\/zkt\/a\/b$/),
    ];
    const r = createRestRouter(
      table.map((t) => t.route),
      1024,
      createLogger("error"),
    );
    // What the whole list answers, route by route in order (as the router did before it indexed them).
    const scan = (method: string, path: string): { status: number; by?: string } => {
      const found = table.filter((t) => t.route.pattern.test(path));
      const hit = found.find((t) => t.route.method === method);
      return hit ? { status: 200, by: hit.name } : { status: found.length > 0 ? 405 : 404 };
    };
    const paths = ["/zgt", "/zgt/", "/zgt/k", "/zkt/k", "/zkt/k/", "/zkt/transactions/q", "/zkt/a/b", "/one/x", "/two/x", "/three/x", "/four/x"];
    paths.push("/FIVE/X", "/abcdefghijklmnop", "/abcdefghijklmnop/", "/zkt", "/unknown/x", "/", "/zktx/k");
    for (const path of paths)
      for (const method of ["POST", "GET", "PUT"]) {
        const answer = await r.handle({ method, url: path, headers: {}, remoteAddress: "127.0.0.1", bytes: async () => Buffer.alloc(0) });
        const by = answer.status === 200 ? (JSON.parse(answer.body!) as { by: string }).by : undefined;
        expect({ path, method, status: answer.status, by }).toEqual({ path, method, ...scan(method, path), by: scan(method, path).by });
      }
  });
});
