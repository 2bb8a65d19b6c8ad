// A socket that errors is destroyed. The listener is made here, in a scope of its own: made inside a
// connection's or an upgrade's handler it would keep that whole scope (the upgrade request, the first bytes
// read) alive as long as the socket, a WebSocket's whole life.
import type { Duplex } from "node:stream";

export function destroyOnError(socket: Duplex): void {
  socket.on("error", () => socket.destroy());
}
