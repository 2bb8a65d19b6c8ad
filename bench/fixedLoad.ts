// A closed-loop load of exactly `n` POSTs over keep-alive connections: each connection sends its next request
// when its answer is complete (read by Content-Length); any answer but a 2xx fails the load. Used by the
// A/B benches (bundleAB.ts, instructions.ts), which count work per answer and so need an exact count.
import net from "node:net";

export function fixedLoad(port: number, path: string, body: string, n: number, connections = 32): Promise<void> {
  const request = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  let sent = 0;
  let answered = 0;
  return new Promise((done, fail) => {
    for (let c = 0; c < connections; c++) {
      const socket = net.connect(port, "127.0.0.1");
      let pending = "";
      const next = (): void => {
        if (sent < n) {
          sent++;
          socket.write(request);
        } else socket.end();
      };
      socket.on("connect", next);
      socket.on("error", fail);
      socket.on("data", (chunk: Buffer) => {
        pending += chunk.toString("latin1");
        for (;;) {
          const end = pending.indexOf("\r\n\r\n");
          if (end < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(pending.slice(0, end))?.[1] ?? Number.NaN);
          if (!Number.isFinite(length)) return fail(new Error(`an answer without Content-Length: ${pending.slice(0, end)}`));
          if (pending.length < end + 4 + length) return;
          if (!/^HTTP\/1\.1 20\d/.test(pending)) return fail(new Error(`not a 2xx: ${pending.slice(0, end + 4 + length)}`));
          pending = pending.slice(end + 4 + length);
          if (++answered === n) done();
          next();
        }
      });
    }
  });
}
