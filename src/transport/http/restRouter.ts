// Everything on a network's port that is not a Connect path: a small table of routes, each returning an
// HttpAnswer. Body limits, request ids, logging with redacted paths, and the unmatched 404 live here once.
import type { NodeHandlerFn, NodeServerRequest, NodeServerResponse } from "./nodeTypes.js";
import { randomUUID } from "node:crypto";
import { toGatewayError } from "../../errors.js";
import { redactPath, type Logger } from "../../log/logger.js";
import { readBody } from "./readBody.js";
import { clientIp } from "../../limits/clientIp.js";

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
  headers: NodeServerRequest["headers"];
  clientIp: string;
  requestId: string;
  /** Reads the body (limit enforced); throws a payload_too_large GatewayError. */
  body(): Promise<string>;
}

export interface RestRoute {
  method: "GET" | "POST";
  pattern: RegExp;
  handle(req: RestRequest): Promise<HttpAnswer>;
  /** How an exception (e.g. an oversized body) is rendered for this route's clients. */
  renderError(err: ReturnType<typeof toGatewayError>): HttpAnswer;
}

export function json(status: number, value: unknown, headers?: Record<string, string>): HttpAnswer {
  return { status, body: JSON.stringify(value), contentType: "application/json", ...(headers ? { headers } : {}) };
}

export function createRestHandler(
  routes: RestRoute[],
  bodyLimitBytes: number,
  log: Logger,
  trustedProxies: ReadonlySet<string> = new Set(),
  /** Sees every answer: the route's pattern (never the path, which may hold a key) and the status. */
  observe: (route: string, status: number) => void = () => undefined,
): NodeHandlerFn {
  return (req, res) => {
    const requestId = randomUUID();
    const started = performance.now();
    const url = req.url ?? "/";
    const path = url.split("?", 1)[0] ?? "/";
    const method = req.method ?? "GET";
    let matched: { route: RestRoute; params: string[] } | undefined;
    let pathKnown = false;
    for (const route of routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      pathKnown = true;
      if (route.method === method) {
        matched = { route, params: m.slice(1) };
        break;
      }
    }
    const finish = (answer: HttpAnswer): void => {
      write(req, res, answer, requestId);
      observe(matched?.route.pattern.source ?? "unmatched", answer.status);
      if (log.debugEnabled) log.debug("request", { requestId, method, path: redactPath(path), status: answer.status, ms: Math.round(performance.now() - started) });
    };
    if (!matched) {
      req.resume();
      finish(json(pathKnown ? 405 : 404, { error: pathKnown ? `${method} is not allowed on ${redactPath(path)}` : `no such endpoint: ${method} ${redactPath(path)}` }));
      return;
    }
    const { route, params } = matched;
    const restReq: RestRequest = {
      method,
      path,
      params,
      headers: req.headers,
      clientIp: clientIp(req.socket?.remoteAddress, req.headers["x-forwarded-for"], trustedProxies),
      requestId,
      body: () => readBody(req, bodyLimitBytes),
    };
    route.handle(restReq).then(finish, (err: unknown) => {
      const gw = toGatewayError(err);
      if (gw.kind === "internal") log.error("request failed", { requestId, path: redactPath(path), error: String(gw.cause ?? gw) });
      finish(route.renderError(gw));
    });
  };
}

function write(req: NodeServerRequest, res: NodeServerResponse, answer: HttpAnswer, requestId: string): void {
  if (res.headersSent) return;
  const headers: Record<string, string> = { "x-request-id": requestId, ...answer.headers };
  if (answer.body !== undefined) headers["content-type"] = answer.contentType ?? "application/json";
  // Refusing a body before reading it all: close HTTP/1.1 connections so the unread rest is not parsed as
  // the next request (HTTP/2 forbids the header; its stream just ends).
  if (!req.readableEnded && req.httpVersionMajor === 1) headers.connection = "close";
  (res as import("node:http").ServerResponse).writeHead(answer.status, headers);
  if (answer.body === undefined) res.end();
  else res.end(answer.body);
}
