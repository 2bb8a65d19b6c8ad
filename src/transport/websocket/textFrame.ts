// A text message written as one WebSocket frame (RFC 6455 §5.2: final, opcode 1, unmasked as a server sends
// it), header and payload in one write. ws's own send corks the socket and writes the header and the payload
// apart (a writev of two); at 10,000 subscribers of a head that is the fan-out's cost above the kernel's
// (bench/README.md).
import { writeSync } from "node:fs";
import { Socket } from "node:net";
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

/** A plain TCP socket's handle, where Node has a file descriptor for it (not under TLS, nor on Windows). */
interface Descriptor {
  _handle?: { fd?: unknown } | null;
}
const isPlainTcp = (socket: Duplex): socket is Socket & Descriptor => socket instanceof Socket && !("encrypted" in socket);

/** Frames up to this size are written from one reused buffer; bigger ones (rare: large answers) go as before. */
const DIRECT_MAX = 64 * 1024;
let scratch = Buffer.allocUnsafeSlow(4 * 1024);

/** Writes a text frame of `text`; `length` is its UTF-8 length when the caller knows it already. */
export type FrameWriter = (text: string, length?: number) => void;

/**
 * The writer of `socket`'s text frames (a notification's length is counted once for all its subscribers).
 *
 * When nothing waits in a TCP socket's stream, a frame goes to the kernel in one write system call straight from
 * a reused buffer: Node's stream write (a Writable, a WriteWrap and an after-write tick per call) cost about a
 * microsecond more per socket, 10 ms a head at 10,000 subscribers (bench/README.md). Order is kept: only an empty
 * stream is bypassed, and whatever the kernel does not take goes into the stream, so later frames queue behind
 * it; the stream then also reports errors (a reset peer) as it always did.
 */
export function frameWriter(socket: Duplex): FrameWriter {
  if (!isPlainTcp(socket)) return (text, length = Buffer.byteLength(text)) => streamWrite(socket, headerFor(length), text, length);
  return (text, length = Buffer.byteLength(text)) => {
    const head = headerFor(length);
    const size = head.length + length;
    // The handle (and its descriptor) is gone once the socket is destroyed: this runs in the same turn.
    const fd = size <= DIRECT_MAX && socket.writableLength === 0 ? socket._handle?.fd : undefined;
    if (typeof fd !== "number" || fd < 0 || socket.writableEnded) return streamWrite(socket, head, text, length);
    if (scratch.length < size) scratch = Buffer.allocUnsafeSlow(Math.min(DIRECT_MAX, 2 ** Math.ceil(Math.log2(size))));
    scratch.write(head, 0, "latin1");
    scratch.write(text, head.length, length === text.length ? "latin1" : "utf8");
    let written = 0;
    try {
      written = writeSync(fd, scratch, 0, size);
    } catch {
      // EAGAIN (the kernel's buffer is full) or the socket failed: the stream takes the frame and deals with it.
    }
    if (written < size) socket.write(Buffer.from(scratch.subarray(written, size)));
  };
}

/**
 * Through the socket's stream. JSON-RPC answers and notifications are nearly always ASCII, whose UTF-8 is its
 * latin1: header and text go as one latin1 string, which Node encodes straight into the write (no Buffer per
 * message). Anything else is encoded into a Buffer first.
 */
function streamWrite(socket: Duplex, head: string, text: string, length: number): void {
  if (length === text.length) {
    socket.write(head + text, "latin1");
    return;
  }
  const frame = Buffer.allocUnsafe(head.length + length);
  frame.write(head, 0, "latin1");
  frame.write(text, head.length, "utf8");
  socket.write(frame);
}
