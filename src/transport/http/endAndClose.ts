// A last answer on a connection the gateway is done with (a refusal, a timeout), then the connection closed.
// socket.end() alone only half-closes: a client that never ends its side kept the socket open, its file
// descriptor held (past the connection cap, uncounted) and the server's close waiting on it for ever.
import type { Duplex } from "node:stream";

export function endAndClose(socket: Duplex, answer: string): void {
  socket.end(answer, () => socket.destroy());
}
