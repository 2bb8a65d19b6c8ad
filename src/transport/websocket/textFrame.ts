// A text message written as one WebSocket frame (RFC 6455 §5.2: final, opcode 1, unmasked as a server sends
// it), header and payload in one write, and when the socket's stream is empty straight to the kernel. ws's own
// send corks the socket and writes the header and the payload apart (a writev of two); at 10,000 subscribers
// of a head, that and Node's stream were the fan-out's cost above the kernel's (bench/README.md).
import { writeSync } from "node:fs";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { AFTER_RESULT, BEFORE_ID, BEFORE_RESULT, notificationBytes, notificationText } from "../../live/notification.js";
import type { SharedResult } from "../../live/subscriptions.js";

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

// Answers of one length in a row share their header (a block's notifications have theirs in its frame).
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

/** Frames up to this size are written from a reused buffer; bigger ones (rare: large answers) go as before. */
const DIRECT_MAX = 64 * 1024;
let scratch = Buffer.allocUnsafeSlow(4 * 1024);

/** A socket's text frames. */
export interface FrameWriter {
  /** A text frame of `text`; `length` is its UTF-8 length when the caller knows it already. */
  text(text: string, length?: number): void;
  /** Subscription `id`'s notification of `result`, which the same block gives all its subscribers. */
  notification(id: string, result: SharedResult): void;
}

/** A block's notification framed once for all its subscribers: only the id, at `idAt`, differs between them. */
interface Template {
  result: SharedResult;
  idLength: number;
  frame: Buffer;
  idAt: number;
}
let template: Template | undefined;

function templateFor(result: SharedResult, idLength: number): Template | undefined {
  if (template?.result === result && template.idLength === idLength) return template;
  const bytes = notificationBytes(idLength, result);
  const head = headerFor(bytes);
  if (head.length + bytes > DIRECT_MAX) return undefined; // not kept (a large log): framed per subscriber
  const frame = Buffer.allocUnsafeSlow(head.length + bytes);
  let at = frame.write(head, 0, "latin1");
  at += frame.write(BEFORE_ID, at, "latin1");
  const idAt = at;
  at += idLength;
  at += frame.write(BEFORE_RESULT, at, "latin1");
  at += frame.write(result.text, at, "utf8");
  frame.write(AFTER_RESULT, at, "latin1");
  template = { result, idLength, frame, idAt };
  return template;
}

/**
 * The writer of `socket`'s text frames (a class: at 10,000 sockets, closures per socket are memory per socket).
 *
 * When nothing waits in a TCP socket's stream, a frame goes to the kernel in one write system call from a reused
 * buffer: Node's stream write (a Writable, a WriteWrap and an after-write tick per call) cost about a
 * microsecond more per socket, 10 ms a head at 10,000 subscribers; so did making each subscriber's notification
 * text and copying it into the frame, where now only its id is copied into the block's frame (bench/README.md).
 * Order is kept: only an empty stream is bypassed, and whatever the kernel does not take goes into the stream,
 * so later frames queue behind it; the stream then also reports errors (a reset peer) as it always did.
 */
export function frameWriter(socket: Duplex): FrameWriter {
  return isPlainTcp(socket) ? new DirectFrames(socket) : new StreamFrames(socket);
}

/** Every frame through the socket's stream (TLS, or no descriptor). */
class StreamFrames<S extends Duplex = Duplex> implements FrameWriter {
  constructor(protected readonly socket: S) {}

  text(text: string, length = Buffer.byteLength(text)): void {
    streamWrite(this.socket, headerFor(length), text, length);
  }

  notification(id: string, result: SharedResult): void {
    this.text(notificationText(id, result), notificationBytes(id.length, result));
  }
}

/** Frames straight to the kernel while the socket's stream is empty. */
class DirectFrames extends StreamFrames<Socket & Descriptor> {
  // A handle's descriptor is fixed while the handle lives (reading it is a call into C++, per write); the
  // handle is gone (null) once the socket is destroyed.
  private handle: Descriptor["_handle"];
  private fd = -1;

  override text(text: string, length = Buffer.byteLength(text)): void {
    const head = headerFor(length);
    const size = head.length + length;
    const fd = size <= DIRECT_MAX ? this.descriptor() : -1;
    if (fd < 0) return streamWrite(this.socket, head, text, length);
    if (scratch.length < size) scratch = Buffer.allocUnsafeSlow(Math.min(DIRECT_MAX, 2 ** Math.ceil(Math.log2(size))));
    scratch.write(head, 0, "latin1");
    scratch.write(text, head.length, length === text.length ? "latin1" : "utf8");
    this.send(fd, scratch, size);
  }

  override notification(id: string, result: SharedResult): void {
    const t = templateFor(result, id.length);
    if (!t) return super.notification(id, result);
    t.frame.write(id, t.idAt, "latin1");
    const fd = this.descriptor();
    if (fd < 0) this.socket.write(Buffer.from(t.frame));
    else this.send(fd, t.frame, t.frame.length);
  }

  /** The descriptor, when a frame may bypass the stream; else -1. */
  private descriptor(): number {
    const tcp = this.socket;
    if (tcp.writableLength !== 0 || tcp.writableEnded) return -1;
    if (tcp._handle !== this.handle) {
      this.handle = tcp._handle;
      this.fd = typeof this.handle?.fd === "number" ? this.handle.fd : -1;
    }
    return this.handle ? this.fd : -1;
  }

  /** `frame[0, size)` to the kernel at `fd`; the rest, if it does not take it all, copied into the stream. */
  private send(fd: number, frame: Buffer, size: number): void {
    let written = 0;
    try {
      written = writeSync(fd, frame, 0, size);
    } catch {
      // EAGAIN (the kernel's buffer is full) or the socket failed: the stream takes the frame and deals with it.
    }
    if (written < size) this.socket.write(Buffer.from(frame.subarray(written, size)));
  }
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
