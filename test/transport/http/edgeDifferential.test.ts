// Differential test of the HTTP edge (#28): a corpus of edge and malformed HTTP/1.1 requests (framing,
// whitespace, line endings, request lines, header names and values, the smuggling set, llhttp's test shapes)
// goes to plain node:http and to the gateway's listener (protocol sniff + fast lane + hand-off to node:http),
// both serving the same echo app. Every response on the connection, status and echoed request, must match:
// the fast lane may only be faster, never more (or less) permissive than node:http.
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenDual, type DualServer } from "../../../src/transport/http/listen.js";
import type { NodeHandlerFn } from "../../../src/transport/http/nodeTypes.js";
import type { HttpAnswer, RestInput } from "../../../src/transport/http/restRouter.js";

const echo = (method: string, url: string, body: string): string => JSON.stringify({ method, url, body });

const nodeApp: NodeHandlerFn = (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = echo(req.method ?? "", req.url ?? "", Buffer.concat(chunks).toString("utf8"));
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
};

const laneApp = {
  serves: (method: string, path: string): boolean => method === "POST" && (path === "/" || path === "/zkt/try-it-out"),
  handle: (input: RestInput): HttpAnswer => ({
    status: 200,
    headers: { "content-type": "application/json" },
    body: echo(input.method, input.url, input.text ?? ""),
  }),
  bodyLimitBytes: 1024 * 1024,
};

const LIMITS = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 10_000,
  maxConnectionsPerIp: 10_000,
  newConnectionsPerIpPerSecond: 100_000,
  bodyBudgetBytes: 256 * 1024 * 1024,
  bodyBudgetPerIpBytes: 256 * 1024 * 1024,
  bodyBudgetPerSessionBytes: 8 * 1024 * 1024,
  h2AnswerBytesPerIp: 8 * 1024 * 1024,
  h2StreamsPerIpPer10s: 5_000,
};

/** The corpus: each entry is the raw bytes a client sends (latin1), then it waits for the answers. */
function corpus(): { name: string; raw: string }[] {
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
  const cl = String(body.length);
  const cases: { name: string; raw: string }[] = [];
  const req = (headers: string[], opts: { line?: string; eol?: string; body?: string } = {}): string => {
    const eol = opts.eol ?? "\r\n";
    return (opts.line ?? "POST {path} HTTP/1.1") + eol + headers.map((h) => h + eol).join("") + eol + (opts.body ?? body);
  };
  const host = "Host: gw";
  const variants: [string, string][] = [
    ["valid", req([host, `Content-Length: ${cl}`])],
    ["valid, lower-case names", req(["host: gw", `content-length: ${cl}`])],
    ["valid, odd-case names", req(["hOsT: gw", `CoNtEnT-LeNgTh: ${cl}`])],
    ["valid, tab before value", req([host, `Content-Length:\t${cl}`])],
    ["valid, no space before value", req([host, `Content-Length:${cl}`])],
    ["valid, trailing spaces", req([host, `Content-Length: ${cl}   `])],
    ["valid, trailing tab", req([host, `Content-Length: ${cl}\t`])],
    ["trailing tab in Host", req(["Host: gw\t", `Content-Length: ${cl}`])],
    ["trailing tab in another header", req([host, "X-A: 1\t", `Content-Length: ${cl}`])],
    ["tab inside Content-Length", req([host, `Content-Length: \t${cl}\t `])],
    ["space then tab after Content-Length", req([host, `Content-Length: ${cl} \t`])],
    ["valid, extra headers", req([host, "Content-Type: application/json", "X-A: 1", "X-B: two words", `Content-Length: ${cl}`])],
    ["valid, keep-alive", req([host, "Connection: keep-alive", `Content-Length: ${cl}`])],
    ["valid, empty header value", req([host, "X-Empty:", `Content-Length: ${cl}`])],
    ["valid, obs-text value", req([host, "X-Latin: caf\xe9", `Content-Length: ${cl}`])],
    ["valid, query string", req([host, `Content-Length: ${cl}`], { line: "POST {path}?a=1&b=2 HTTP/1.1" })],
    ["valid, zero length", req([host, "Content-Length: 0"], { body: "" })],
    ["valid, pipelined twice", req([host, `Content-Length: ${cl}`]) + req([host, `Content-Length: ${cl}`])],
    ["Connection: close", req([host, "Connection: close", `Content-Length: ${cl}`])],
    ["HTTP/1.0", req([host, `Content-Length: ${cl}`], { line: "POST {path} HTTP/1.0" })],
    ["HTTP/1.0 without Host", req([`Content-Length: ${cl}`], { line: "POST {path} HTTP/1.0" })],
    ["HTTP/2.0 request line", req([host, `Content-Length: ${cl}`], { line: "POST {path} HTTP/2.0" })],
    ["HTTP/1.2", req([host, `Content-Length: ${cl}`], { line: "POST {path} HTTP/1.2" })],
    ["lower-case version", req([host, `Content-Length: ${cl}`], { line: "POST {path} http/1.1" })],
    ["lower-case method", req([host, `Content-Length: ${cl}`], { line: "post {path} HTTP/1.1" })],
    ["unknown method", req([host, `Content-Length: ${cl}`], { line: "FROB {path} HTTP/1.1" })],
    ["control char in method", req([host, `Content-Length: ${cl}`], { line: "PO\x01ST {path} HTTP/1.1" })],
    ["double space after method", req([host, `Content-Length: ${cl}`], { line: "POST  {path} HTTP/1.1" })],
    ["double space before version", req([host, `Content-Length: ${cl}`], { line: "POST {path}  HTTP/1.1" })],
    ["tab in request line", req([host, `Content-Length: ${cl}`], { line: "POST\t{path} HTTP/1.1" })],
    ["extra token after version", req([host, `Content-Length: ${cl}`], { line: "POST {path} HTTP/1.1 x" })],
    ["no version", req([host, `Content-Length: ${cl}`], { line: "POST {path}" })],
    ["NUL in target", req([host, `Content-Length: ${cl}`], { line: "POST {path}\x00x HTTP/1.1" })],
    ["control char in target", req([host, `Content-Length: ${cl}`], { line: "POST {path}\x7f HTTP/1.1" })],
    ["tab in target", req([host, `Content-Length: ${cl}`], { line: "POST {path}\tx HTTP/1.1" })],
    ["vertical tab in target", req([host, `Content-Length: ${cl}`], { line: "POST {path}\x0bx HTTP/1.1" })],
    ["asterisk target", req([host, `Content-Length: ${cl}`], { line: "POST * HTTP/1.1" })],
    ["absolute-form target", req([host, `Content-Length: ${cl}`], { line: "POST http://gw{path} HTTP/1.1" })],
    ["percent-encoded NUL in target", req([host, `Content-Length: ${cl}`], { line: "POST {path}%00 HTTP/1.1" })],
    ["latin1 byte in target", req([host, `Content-Length: ${cl}`], { line: "POST {path}\xe9 HTTP/1.1" })],
    ["missing Host", req([`Content-Length: ${cl}`])],
    ["empty Host", req(["Host:", `Content-Length: ${cl}`])],
    ["two Hosts", req([host, "Host: other", `Content-Length: ${cl}`])],
    ["Host then bare LF then TE", req(["Host: \nTransfer-Encoding: chunked", `Content-Length: ${cl}`])],
    ["Content-Length with NBSP", req([host, `Content-Length: ${cl}\xa0`])],
    ["Content-Length with leading NBSP", req([host, `Content-Length: \xa0${cl}`])],
    ["Content-Length with VT", req([host, `Content-Length: ${cl}\x0b`])],
    ["Content-Length with FF", req([host, `Content-Length: \x0c${cl}`])],
    ["Content-Length with NUL", req([host, `Content-Length: ${cl}\x00`])],
    ["Content-Length with bare CR", req([host, `Content-Length: ${cl}\r`])],
    ["Content-Length plus sign", req([host, `Content-Length: +${cl}`])],
    ["Content-Length minus", req([host, "Content-Length: -1"])],
    ["Content-Length leading zeros", req([host, `Content-Length: 000${cl}`])],
    ["Content-Length hex", req([host, `Content-Length: 0x${Number(cl).toString(16)}`])],
    ["Content-Length with inner space", req([host, `Content-Length: ${cl[0]} ${cl.slice(1)}`])],
    ["Content-Length list of equal values", req([host, `Content-Length: ${cl}, ${cl}`])],
    ["Content-Length list of different values", req([host, `Content-Length: ${cl}, 3`])],
    ["duplicate equal Content-Length", req([host, `Content-Length: ${cl}`, `Content-Length: ${cl}`])],
    ["duplicate different Content-Length", req([host, `Content-Length: ${cl}`, "Content-Length: 3"])],
    ["empty Content-Length", req([host, "Content-Length:"])],
    ["huge Content-Length", req([host, "Content-Length: 99999999999999999999"])],
    ["Content-Length shorter than body", req([host, "Content-Length: 10"])],
    ["Content-Length longer than body, then silence", req([host, `Content-Length: ${Number(cl) + 5}`])],
    ["space before colon", req([host, `Content-Length : ${cl}`])],
    ["tab before colon", req([host, `Content-Length\t: ${cl}`])],
    ["space inside name", req([host, "X Y: 1", `Content-Length: ${cl}`])],
    ["empty header name", req([host, ": 1", `Content-Length: ${cl}`])],
    ["NUL in header name", req([host, "X\x00Y: 1", `Content-Length: ${cl}`])],
    ["non-token char in name", req([host, "X(Y): 1", `Content-Length: ${cl}`])],
    ["line without colon", req([host, "NoColonHere", `Content-Length: ${cl}`])],
    ["NUL in header value", req([host, "X-A: a\x00b", `Content-Length: ${cl}`])],
    ["DEL in header value", req([host, "X-A: a\x7fb", `Content-Length: ${cl}`])],
    ["VT in header value", req([host, "X-A: a\x0bb", `Content-Length: ${cl}`])],
    ["ESC in header value", req([host, "X-A: a\x1bb", `Content-Length: ${cl}`])],
    ["bare CR in header value", req([host, "X-A: a\rb", `Content-Length: ${cl}`])],
    ["bare LF in header value", req([host, "X-A: a\nb", `Content-Length: ${cl}`])],
    ["obs-fold continuation", req([host, "X-A: a", " folded", `Content-Length: ${cl}`])],
    ["obs-fold before Content-Length", req([host, "X-A: a", `\tContent-Length: ${cl}`])],
    ["leading whitespace first header", req([` ${host}`, `Content-Length: ${cl}`])],
    ["LF-only line endings", req([host, `Content-Length: ${cl}`], { eol: "\n" })],
    ["LF after request line only", req([host, `Content-Length: ${cl}`]).replace("HTTP/1.1\r\n", "HTTP/1.1\n")],
    ["LF before body only", req([host, `Content-Length: ${cl}`]).replace(`${cl}\r\n\r\n`, `${cl}\r\n\n`)],
    ["CR-only line endings", req([host, `Content-Length: ${cl}`], { eol: "\r" })],
    ["leading empty line", "\r\n" + req([host, `Content-Length: ${cl}`])],
    ["two leading empty lines", "\r\n\r\n" + req([host, `Content-Length: ${cl}`])],
    ["Transfer-Encoding chunked", req([host, "Transfer-Encoding: chunked"], { body: `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` })],
    ["TE chunked, upper case", req([host, "Transfer-Encoding: CHUNKED"], { body: `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` })],
    [
      "TE chunked with CL (smuggling)",
      req([host, `Content-Length: ${cl}`, "Transfer-Encoding: chunked"], { body: `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` }),
    ],
    [
      "CL with TE chunked (smuggling)",
      req([host, "Transfer-Encoding: chunked", `Content-Length: ${cl}`], { body: `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` }),
    ],
    ["TE identity", req([host, "Transfer-Encoding: identity", `Content-Length: ${cl}`])],
    ["TE xchunked", req([host, "Transfer-Encoding: xchunked", `Content-Length: ${cl}`])],
    ["TE chunked, identity", req([host, "Transfer-Encoding: chunked, identity"], { body: `0\r\n\r\n` })],
    ["TE identity, chunked", req([host, "Transfer-Encoding: identity, chunked"], { body: `0\r\n\r\n` })],
    ["TE with leading tab", req([host, "Transfer-Encoding:\tchunked"], { body: `0\r\n\r\n` })],
    ["TE with VT", req([host, "Transfer-Encoding: \x0bchunked"], { body: `0\r\n\r\n` })],
    ["TE with NBSP", req([host, "Transfer-Encoding: chunked\xa0"], { body: `0\r\n\r\n` })],
    ["duplicate TE", req([host, "Transfer-Encoding: chunked", "Transfer-Encoding: chunked"], { body: `0\r\n\r\n` })],
    ["TE space before colon", req([host, "Transfer-Encoding : chunked", `Content-Length: ${cl}`])],
    ["chunk size with extension", req([host, "Transfer-Encoding: chunked"], { body: `${body.length.toString(16)};x=y\r\n${body}\r\n0\r\n\r\n` })],
    ["chunk size invalid", req([host, "Transfer-Encoding: chunked"], { body: `zz\r\n${body}\r\n0\r\n\r\n` })],
    ["chunk with trailer", req([host, "Transfer-Encoding: chunked"], { body: `${body.length.toString(16)}\r\n${body}\r\n0\r\nX-T: 1\r\n\r\n` })],
    ["chunk LF-only", req([host, "Transfer-Encoding: chunked"], { body: `${body.length.toString(16)}\n${body}\n0\n\n` })],
    ["Expect 100-continue", req([host, "Expect: 100-continue", `Content-Length: ${cl}`])],
    ["Expect unknown", req([host, "Expect: frobnicate", `Content-Length: ${cl}`])],
    ["Upgrade websocket without Connection", req([host, "Upgrade: websocket", `Content-Length: ${cl}`])],
    ["Connection: upgrade without Upgrade", req([host, "Connection: upgrade", `Content-Length: ${cl}`])],
    ["Connection: keep-alive, close", req([host, "Connection: keep-alive, close", `Content-Length: ${cl}`])],
    ["Connection: CLOSE", req([host, "Connection: CLOSE", `Content-Length: ${cl}`])],
    ["head of 15 KB", req([host, "X-Big: " + "a".repeat(15 * 1024), `Content-Length: ${cl}`])],
    ["head of 17 KB", req([host, "X-Big: " + "a".repeat(17 * 1024), `Content-Length: ${cl}`])],
    ["head of 40 KB", req([host, "X-Big: " + "a".repeat(40 * 1024), `Content-Length: ${cl}`])],
    ["many headers", req([host, ...Array.from({ length: 120 }, (_, i) => `X-H${i}: ${i}`), `Content-Length: ${cl}`])],
    ["GET with body", req([host, `Content-Length: ${cl}`], { line: "GET {path} HTTP/1.1" })],
    ["GET without body", req([host], { line: "GET {path} HTTP/1.1", body: "" })],
    ["HEAD", req([host], { line: "HEAD {path} HTTP/1.1", body: "" })],
    ["OPTIONS", req([host], { line: "OPTIONS {path} HTTP/1.1", body: "" })],
    ["PUT with body", req([host, `Content-Length: ${cl}`], { line: "PUT {path} HTTP/1.1" })],
    ["POST without length", req([host], { body: "" })],
    ["POST without length, with body", req([host])],
    ["valid then garbage", req([host, `Content-Length: ${cl}`]) + "GARBAGE\r\n\r\n"],
    ["valid then LF-only head", req([host, `Content-Length: ${cl}`]) + req([host, `Content-Length: ${cl}`], { eol: "\n" })],
    ["valid then NBSP length", req([host, `Content-Length: ${cl}`]) + req([host, `Content-Length: ${cl}\xa0`])],
    [
      "valid then smuggled TE",
      req([host, `Content-Length: ${cl}`]) + req([host, `Content-Length: ${cl}`, "Transfer-Encoding: chunked"], { body: "0\r\n\r\n" }),
    ],
    ["h2 preface prefix then h1", "PRI * HTTP/1.1\r\nHost: gw\r\n\r\n"],
    ["only CRLFs", "\r\n\r\n\r\n\r\n"],
    ["binary junk", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"],
    ["valid, UTF-8 body", req([host, `Content-Length: ${Buffer.byteLength('{"a":"é"}')}`], { body: Buffer.from('{"a":"é"}').toString("latin1") })],
  ];
  for (const path of ["/", "/zkt/try-it-out", "/elsewhere"]) {
    for (const [name, raw] of variants) cases.push({ name: `${name} [${path}]`, raw: raw.replaceAll("{path}", path) });
  }
  return cases;
}

interface Outcome {
  answers: { status: number; body: string }[];
}

/** node:http's parse errors (llhttp): 400, and 431 for an oversized head. */
const PARSE_ERROR = new Set([400, 431]);

/**
 * Answers before a parse error on the same connection depend on timing: node:http parses pipelined bytes
 * ahead and, meeting an error, answers 400 and closes before it writes answers still being made. What is
 * compared is the rest: the parse error and anything (wrongly) accepted after it.
 */
function settled(o: Outcome): Outcome {
  const i = o.answers.findIndex((a) => PARSE_ERROR.has(a.status));
  return i < 0 ? o : { answers: o.answers.slice(i) };
}

/** Sends `raw`, collects what comes back until the server closes or 1 s passes with nothing new (generous: the suite runs files side by side). */
function exchange(port: number, raw: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let quiet: NodeJS.Timeout;
    const finish = (): void => {
      clearTimeout(quiet);
      socket.destroy();
      resolve({ answers: parseAnswers(received) });
    };
    const wait = (): void => {
      clearTimeout(quiet);
      quiet = setTimeout(finish, 1_000);
    };
    socket.on("connect", () => {
      socket.write(Buffer.from(raw, "latin1"));
      wait();
    });
    socket.on("data", (d: Buffer) => {
      received = Buffer.concat([received, d]);
      wait();
    });
    socket.on("error", finish);
    socket.on("close", finish);
  });
}

function parseAnswers(buf: Buffer): { status: number; body: string }[] {
  const out: { status: number; body: string }[] = [];
  for (;;) {
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) return out;
    const head = buf.toString("latin1", 0, end);
    const status = Number(head.split(" ")[1]);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    const n = length ? Number(length[1]) : 0;
    out.push({ status, body: buf.toString("utf8", end + 4, end + 4 + n) });
    buf = buf.subarray(end + 4 + n);
  }
}

describe("the HTTP edge against plain node:http (differential corpus)", () => {
  let plain: http.Server;
  let plainPort: number;
  let edge: DualServer;
  beforeAll(async () => {
    plain = http.createServer(nodeApp as http.RequestListener);
    await new Promise<void>((r) => plain.listen(0, "127.0.0.1", () => r()));
    plainPort = (plain.address() as net.AddressInfo).port;
    edge = await listenDual(nodeApp, "127.0.0.1", 0, LIMITS, laneApp);
  });
  afterAll(async () => {
    plain?.closeAllConnections();
    plain?.close();
    await edge?.close(0);
  });

  it("gives the same answers to at least 200 edge and malformed requests", { timeout: 120_000 }, async () => {
    const cases = corpus();
    expect(cases.length).toBeGreaterThanOrEqual(200);
    const mismatches: string[] = [];
    const verdicts = { accepted: 0, refused: 0 };
    for (let i = 0; i < cases.length; i += 50) {
      await Promise.all(
        cases.slice(i, i + 50).map(async (c) => {
          const [want, got] = (await Promise.all([exchange(plainPort, c.raw), exchange(edge.port, c.raw)])).map(settled) as [Outcome, Outcome];
          if (JSON.stringify(want) !== JSON.stringify(got))
            mismatches.push(`${c.name}: node:http ${JSON.stringify(want.answers)} gateway ${JSON.stringify(got.answers)}`);
          if (want.answers.some((a) => a.status === 200)) verdicts.accepted++;
          else verdicts.refused++;
        }),
      );
    }
    expect(mismatches).toEqual([]);
    // The corpus exercises both sides of the line.
    expect(verdicts.accepted).toBeGreaterThan(50);
    expect(verdicts.refused).toBeGreaterThan(50);
  });
});
