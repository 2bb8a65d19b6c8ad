// Everything on a network's port that is not a Connect path: a small table of routes, each returning an
// HttpAnswer. Body limits, request ids, logging with redacted paths, and the unmatched 404 live here once.
// The router is transport-neutral (`handle`); `nodeHandler` and the HTTP/1.1 fast lane (fastLane.ts) both
// feed it, so a request gets the same answer whichever of them parsed it.
import type { IncomingHttpHeaders } from "node:http";
import type { NodeHandlerFn, NodeServerRequest, NodeServerResponse } from "./nodeTypes.js";
import { randomBytes } from "node:crypto";
import { GatewayError, toGatewayError } from "../../errors.js";
import { redactPath, type Logger } from "../../log/logger.js";
import { readBody } from "./readBody.js";
import { clientIp, type ProxyMatcher } from "./clientIp.js";
import { type CorsPolicy, corsHeaders } from "./cors.js";
import { PeriodicSummary } from "../../log/periodicSummary.js";
import { callerContext, inSpan, SpanKind, tracingOn } from "../../trace/tracing.js";
import { attempt, type MaybePromise } from "../../maybePromise.js";

export interface HttpAnswer {
  status: number;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface RestRequest {
  method: string;
  path: string;
  /** Capture groups of the route's pattern. */
  params: string[];
  headers: IncomingHttpHeaders;
  clientIp: string;
  requestId: string;
  /** Reads the body (limit enforced); throws a payload_too_large GatewayError. */
  body(): Promise<string>;
  /** The body's bytes, undecoded (read once, like body()). */
  bytes(): Promise<Buffer>;
  /** The route is done with bytes(): the transport may give their memory back now (transports that can). */
  release?: (() => void) | undefined;
  /** The body, when the transport has already read all of it (the fast lane): no promise needed. */
  text?: string | undefined;
}

/**
 * Whether a caller's spent request window should be asked about before this request's body is parsed: when the
 * body is still to come (reading it costs), or when it is large (parsing it costs the event loop). Small
 * bodies already read go straight on,
 * and are counted where the handlers admit them.
 */
export function costsBeforeAdmission(req: RestRequest): boolean {
  return req.text === undefined || req.text.length > PARSE_FIRST_CHARS;
}
const PARSE_FIRST_CHARS = 64 * 1024;

export interface RestRoute {
  method: "GET" | "POST" | "DELETE";
  pattern: RegExp;
  /** A plain answer when it is ready at once (see maybePromise.ts); a throw or a rejection is rendered by renderError. */
  handle(req: RestRequest): MaybePromise<HttpAnswer>;
  /** How an exception (e.g. an oversized body) is rendered for this route's clients. */
  renderError(err: ReturnType<typeof toGatewayError>): HttpAnswer;
  /** Origins answered with CORS headers; any when unset. */
  cors?: CorsPolicy;
}

/** A request as a transport (node:http or the fast lane) parsed it. */
export interface RestInput {
  method: string;
  /** The request target as sent (path and query). */
  url: string;
  /** The target's path, when the transport already split it off. */
  path?: string;
  headers: IncomingHttpHeaders;
  remoteAddress: string | undefined;
  /** Reads the body's bytes (limit enforced), when not already read. */
  bytes(): Promise<Buffer>;
  /** See RestRequest.release. */
  release?: () => void;
  /** The whole body, when already read. */
  text?: string;
}

export interface RestRouter {
  /** Whether a route answers this method and path (the fast lane takes only those). */
  serves(method: string, path: string): boolean;
  /** The complete answer, headers included (x-request-id, CORS): at once when the route's was; never throws. */
  handle(input: RestInput): MaybePromise<HttpAnswer>;
  /** The same router behind Node's http/http2 request and response. */
  nodeHandler: NodeHandlerFn;
}

export function json(status: number, value: unknown, headers?: Record<string, string>): HttpAnswer {
  return { status, body: JSON.stringify(value), contentType: "application/json", ...(headers ? { headers } : {}) };
}

/** A refusal's Retry-After header, when it says when to come back. */
export function retryAfter(err: GatewayError): Record<string, string> | undefined {
  return err.retryAfterSeconds === undefined ? undefined : { "retry-after": String(err.retryAfterSeconds) };
}

/**
 * Request ids in a UUID's shape: a random prefix per router (process start) and a counter. Unique without
 * drawing randomness per request.
 */
function requestIds(): () => string {
  const prefix = randomBytes(10)
    .toString("hex")
    .replace(/^(.{8})(.{4})(.{4})(.{4})$/, "$1-$2-$3-$4-");
  let n = 0;
  return () => {
    const hex = (n++).toString(16);
    return prefix + (ZEROS[12 - hex.length] ?? "") + hex;
  };
}

/** Leading zeros by count: padStart cost a String.repeat per request. */
const ZEROS = Array.from({ length: 13 }, (_, i) => "0".repeat(i));

/** Object.assign for a few own string headers, without its generic machinery (~700 instructions a call). */
function copyInto(to: Record<string, string>, from: Record<string, string>): void {
  for (const name in from) to[name] = from[name]!;
}

interface Match {
  matched: { route: RestRoute; params: string[]; label: string } | undefined;
  /** Some route has this path (under another method: 405, not 404). */
  pathKnown: boolean;
}

/** The first route for the method whose pattern matches the path. */
function match(routes: RestRoute[], method: string, path: string): Match {
  let pathKnown = false;
  for (const route of routes) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    pathKnown = true;
    if (route.method === method) return { matched: { route, params: m.slice(1), label: routeLabel(route.pattern) }, pathKnown };
  }
  return { matched: undefined, pathKnown };
}

const LITERAL = /^\^((?:\\\/|[A-Za-z0-9_.-])*)\$$/;

/** A pattern's opening segment when it is literal and closed by a slash that must be there (`^\/zkt\/...`: "zkt"). */
const FIRST_SEGMENT = /^\^\\\/([A-Za-z0-9_.-]+)\\\/(?![?*{])/;

/**
 * The routes that can match a path, by its first segment: those whose pattern opens with that segment, and
 * those whose first segment is not literal, in their order. A keyed path (`/zkt/<key>`) is tried against a few
 * patterns, not every route's.
 */
function segmentIndex(routes: RestRoute[]): (path: string) => RestRoute[] {
  // (No flags and no alternation: a pattern that could match another opening is tried for every path.)
  const segments = routes.map((r) => (r.pattern.flags === "" && !r.pattern.source.includes("|") ? FIRST_SEGMENT.exec(r.pattern.source)?.[1] : undefined));
  const open = routes.filter((_, i) => segments[i] === undefined);
  const bySegment = new Map<string, RestRoute[]>();
  for (const segment of new Set(segments))
    if (segment !== undefined)
      bySegment.set(
        segment,
        routes.filter((_, i) => segments[i] === undefined || segments[i] === segment),
      );
  return (path) => {
    const end = path.indexOf("/", 1);
    return bySegment.get(end > 0 ? path.slice(1, end) : path.slice(1)) ?? open;
  };
}

/** A route's metric label: its path with each parameter as `{param}` (`/zkt/{param}`), not a regex source. */
const routeLabels = new WeakMap<RegExp, string>();
export function routeLabel(pattern: RegExp): string {
  let label = routeLabels.get(pattern);
  if (label === undefined) {
    label = pattern.source
      .replace(/^\^|\$$/g, "")
      .replace(/\([^)]*\)/g, "{param}")
      .replace(/\\(.)/g, "$1")
      .replace(/\/\?$/, "");
    routeLabels.set(pattern, (label ||= "/"));
  }
  return label;
}

/** Paths by method, each with its match() worked out in advance. */
type LiteralMatches = Record<RestRoute["method"], Map<string, Match>>;

/**
 * match() worked out in advance for every path that is a pattern's literal (`/^\/$/`, `/^\/healthz$/`), per
 * method: the busiest paths are found with one Map lookup instead of a regular expression per route.
 */
function literalMatches(routes: RestRoute[]): LiteralMatches {
  const table: LiteralMatches = { GET: new Map(), POST: new Map(), DELETE: new Map() };
  for (const route of routes) {
    const lit = route.pattern.flags === "" ? LITERAL.exec(route.pattern.source) : null;
    if (!lit) continue;
    const path = lit[1]!.replaceAll("\\/", "/");
    for (const method of ["GET", "POST", "DELETE"] as const) {
      if (table[method].has(path)) continue;
      const m = match(routes, method, path);
      // Shared by every request to the path: its params must not be changed by one of them.
      if (m.matched) Object.freeze(m.matched.params);
      table[method].set(path, m);
    }
  }
  return table;
}

/** The literal paths of a request's method (none for methods no route has). */
function literalsOf(table: LiteralMatches, method: string): Map<string, Match> | undefined {
  return method === "POST" ? table.POST : method === "GET" ? table.GET : method === "DELETE" ? table.DELETE : undefined;
}

export function createRestRouter(
  routes: RestRoute[],
  bodyLimitBytes: number,
  log: Logger,
  trustedProxies: ProxyMatcher = new Set<string>(),
  /** Sees every answer: the route's pattern (never the path, which may hold a key) and the status. */
  observe: (route: string, status: number) => void = () => undefined,
  /**
   * Counts a request no handler took against the caller's limits (every request counts): one to no route, or
   * one whose body was refused before a route read it (too large, compressed). The limit's headers, or throws
   * the refusal, which is answered instead.
   */
  admitRefused?: (clientIp: string) => MaybePromise<Record<string, string>>,
): RestRouter {
  const nextRequestId = requestIds();
  const clientsGone = new PeriodicSummary(log, "clients closed requests before their bodies arrived");
  const literal = literalMatches(routes);
  const candidates = segmentIndex(routes);
  /** With tracing on, each request is a server span continuing the caller's traceparent (its path redacted: keys). */
  const handle = (input: RestInput): MaybePromise<HttpAnswer> => {
    if (!tracingOn) return handleRequest(input);
    const path = input.path ?? input.url.split("?", 1)[0] ?? "/";
    const found = literalsOf(literal, input.method)?.get(path) ?? match(candidates(path), input.method, path);
    return inSpan(
      `${input.method} ${redactPath(path)}`,
      SpanKind.SERVER,
      (span) => {
        const answer = handleRequest(input);
        const status = (a: HttpAnswer): HttpAnswer => {
          span.setAttribute("http.response.status_code", a.status);
          return a;
        };
        return answer instanceof Promise ? answer.then(status) : status(answer);
      },
      callerContext(input.headers),
      {
        "http.request.method": input.method,
        "url.path": redactPath(path),
        ...(found.matched ? { "http.route": found.matched.label } : {}),
        ...(input.remoteAddress ? { "network.peer.address": input.remoteAddress } : {}),
      },
    );
  };
  const handleRequest = (input: RestInput): MaybePromise<HttpAnswer> => {
    const requestId = nextRequestId();
    const started = log.debugEnabled ? performance.now() : 0;
    const path = input.path ?? input.url.split("?", 1)[0] ?? "/";
    const { method } = input;
    const { matched, pathKnown } = literalsOf(literal, method)?.get(path) ?? match(candidates(path), method, path);
    const finish = (answer: HttpAnswer): HttpAnswer => {
      observe(matched ? matched.label : "unmatched", answer.status);
      if (log.debugEnabled)
        log.debug("request", { requestId, method, path: redactPath(path), status: answer.status, ms: Math.round(performance.now() - started) });
      const headers: Record<string, string> = { "x-request-id": requestId };
      if (input.headers.origin !== undefined) copyInto(headers, corsHeaders(input.headers.origin, matched?.route.cors));
      if (answer.headers) copyInto(headers, answer.headers);
      if (answer.body === undefined) return { status: answer.status, headers };
      headers["content-type"] = answer.contentType ?? "application/json";
      return { status: answer.status, body: answer.body, contentType: headers["content-type"], headers };
    };
    if (!matched) {
      const unmatched = (headers?: Record<string, string>): HttpAnswer => {
        if (!pathKnown) return finish(json(404, { error: `no such endpoint: ${method} ${redactPath(path)}` }, headers));
        // RFC 9110: a 405 says what is allowed, and OPTIONS asks just that.
        const allow = allowedOn(routes, path);
        if (method === "OPTIONS") return finish({ status: 204, headers: { ...headers, allow } });
        return finish(json(405, { error: `${method} is not allowed on ${redactPath(path)}` }, { ...headers, allow }));
      };
      if (!admitRefused) return unmatched();
      const refused = (err: unknown): HttpAnswer => {
        const gw = toGatewayError(err);
        return finish(json(gw.httpStatus, { error: gw.message }, retryAfter(gw)));
      };
      return attempt(() => admitRefused(clientIp(input.remoteAddress, input.headers["x-forwarded-for"], trustedProxies)), unmatched, refused);
    }
    const { route, params } = matched;
    // (One closure per request on the success path: the error answer's is made only when one is needed.)
    const failed = (err: unknown): MaybePromise<HttpAnswer> => {
      const answerError = (gw: GatewayError): HttpAnswer => {
        if (gw.kind === "internal") log.error("request failed", { requestId, path: redactPath(path), error: String(gw.cause ?? gw) });
        else if (gw.kind === "client_gone") clientsGone.note("client closed its request", { requestId, path: redactPath(path) });
        return finish(route.renderError(gw));
      };
      const gw = toGatewayError(err);
      if (!admitRefused || !BODY_REFUSALS.has(gw.kind)) return answerError(gw);
      // The body never reached a handler, so no handler counted it: counted here (a refusal past the limit is the 429).
      return attempt(
        () => admitRefused(clientIp(input.remoteAddress, input.headers["x-forwarded-for"], trustedProxies)),
        () => answerError(gw),
        (over) => answerError(toGatewayError(over)),
      );
    };
    // A compressed body is refused unread (415), not parsed as text and taken for bad JSON.
    const encoding = input.headers["content-encoding"];
    if (encoding !== undefined && encoding !== "identity") return failed(unsupportedEncoding(encoding));
    let answer: MaybePromise<HttpAnswer>;
    try {
      const { body, bytes, release, text } = bodyOf(input);
      answer = route.handle({
        method,
        path,
        params,
        headers: input.headers,
        clientIp: clientIp(input.remoteAddress, input.headers["x-forwarded-for"], trustedProxies),
        requestId,
        body,
        bytes,
        release,
        text,
      });
    } catch (err) {
      return failed(err);
    }
    return answer instanceof Promise ? answer.then(finish, failed) : finish(answer);
  };

  const serves = (method: string, path: string): boolean => routes.some((r) => r.method === method && r.pattern.test(path));

  const nodeHandler: NodeHandlerFn = (req, res) => {
    const answer = handle({
      method: req.method ?? "GET",
      url: req.url ?? "/",
      headers: req.headers,
      remoteAddress: req.socket?.remoteAddress,
      bytes: () => readBody(req, bodyLimitBytes),
    });
    if (answer instanceof Promise) void answer.then((a) => write(req, res, a));
    else write(req, res, answer);
  };

  return { serves, handle, nodeHandler };
}

function write(req: NodeServerRequest, res: NodeServerResponse, answer: HttpAnswer): void {
  if (res.headersSent) return;
  const headers = answer.headers ?? {};
  // Refusing a body before reading it all: close HTTP/1.1 connections so the unread rest is not parsed as
  // the next request (HTTP/2 forbids the header; its stream just ends).
  // (`complete`, not `readableEnded`: a bodiless GET nobody read is complete, and keeps its connection.)
  if (!req.complete && req.httpVersionMajor === 1) headers.connection = "close";
  (res as import("node:http").ServerResponse).writeHead(answer.status, headers);
  if (answer.body === undefined) res.end();
  else res.end(answer.body);
}

/** The methods some route answers on `path`, and OPTIONS, as an Allow header. */
function allowedOn(routes: RestRoute[], path: string): string {
  const methods = new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method));
  return [...methods, "OPTIONS"].join(", ");
}

function unsupportedEncoding(encoding: string): GatewayError {
  return new GatewayError("unsupported_encoding", `Content-Encoding ${encoding.slice(0, 32)} is not supported: send the body uncompressed`);
}

/** Refusals of a body itself, made before any route's handler saw it. */
const BODY_REFUSALS = new Set<string>(["payload_too_large", "unsupported_encoding"]);

/** The body as text and as bytes, each read once whoever asks. */
function bodyOf(input: RestInput): Pick<RestRequest, "body" | "bytes" | "release" | "text"> {
  const { text } = input;
  // Nearly every request (the fast lane's): no closure of its own; `body` reads `text` off the request.
  if (text !== undefined) return { body: textBody, bytes: input.bytes, release: undefined, text };
  const bytes = once(input.bytes);
  return { bytes, body: once(() => bytes().then((b) => b.toString("utf8"))), release: input.release, text: undefined };
}

function textBody(this: RestRequest): Promise<string> {
  return Promise.resolve(this.text!);
}

function once<T>(read: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= read());
}
