// Keccak-256 for the signing hot path. ethers hashes with @noble/hashes, which took ~32 µs per transaction
// hash on these machines; js-sha3 (pure JavaScript, already here through solc) ~10 µs, and a write hashes
// twice (the signing hash and the transaction hash). Byte-identical (test/sequencer/signTransaction.test.ts).
import sha3 from "js-sha3";

export function keccak256Bytes(data: Uint8Array): Uint8Array {
  return new Uint8Array(sha3.keccak256.arrayBuffer(data));
}
