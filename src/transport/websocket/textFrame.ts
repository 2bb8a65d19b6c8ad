// A text message written as one WebSocket frame (RFC 6455 §5.2: final, opcode 1, unmasked as a server sends
// it), header and payload in one write. ws's own send corks the socket and writes the header and the payload
// apart (a writev of two); at 10,000 subscribers of a head that is the fan-out's cost above the kernel's
// (bench/README.md).
import type { Duplex } from "node:stream";

/** The frame's header for a payload of `length` bytes, as latin1 characters (one byte each). */
function header(length: number): string {
  if (length < 126) return String.fromCharCode(0x81, length);
  if (length < 0x10000) return String.fromCharCode(0x81, 126, length >>> 8, length & 0xff);
  const high = Math.floor(length / 0x1_0000_0000);
  const low = length >>> 0;
  return String.fromCharCode(
    0x81,
    127,
    high >>> 24,
    (high >>> 16) & 0xff,
    (high >>> 8) & 0xff,
    high & 0xff,
    low >>> 24,
    (low >>> 16) & 0xff,
    (low >>> 8) & 0xff,
    low & 0xff,
  );
}

// A block's notifications all have the same length (ids are of one size): its header is made once.
let lastLength = -1;
let lastHeader = "";
function headerFor(length: number): string {
  if (length !== lastLength) {
    lastLength = length;
    lastHeader = header(length);
  }
  return lastHeader;
}

/**
 * Writes `text` to `socket` as one text frame; `length` is its UTF-8 length when the caller knows it already
 * (a notification's is counted once for all its subscribers). JSON-RPC answers and notifications are nearly
 * always ASCII, whose UTF-8 is its latin1: header and text go as one latin1 string, which Node encodes
 * straight into the write (no Buffer per message: 10,000 of them per head would wait for the GC as RSS).
 * Anything else is encoded into a Buffer first.
 */
export function writeTextFrame(socket: Duplex, text: string, length = Buffer.byteLength(text)): void {
  if (length === text.length) {
    socket.write(headerFor(length) + text, "latin1");
    return;
  }
  const head = header(length);
  const frame = Buffer.allocUnsafe(head.length + length);
  frame.write(head, 0, "latin1");
  frame.write(text, head.length, "utf8");
  socket.write(frame);
}
