// A text message as the bytes of one WebSocket frame (RFC 6455 §5.2: final, opcode 1, unmasked as a server
// sends it), header and payload in one Buffer: written to the socket in one write. ws's own send corks the
// socket and writes the header and the payload apart (a writev of two); at 10,000 subscribers of a head that
// is the fan-out's cost above the kernel's (bench/README.md).
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const head = length < 126 ? 2 : length < 0x10000 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + length);
  frame[0] = 0x81;
  if (head === 2) frame[1] = length;
  else if (head === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 0x1_0000_0000), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  frame.write(text, head, "utf8");
  return frame;
}
