// Keccak-256 for the signing hot path: js-sha3 (pure JavaScript, already here through solc) hashes a
// transaction in a third of the time ethers' @noble/hashes takes, and a write hashes twice (the signing hash
// and the transaction hash; bench/README.md). Byte-identical (test/sequencer/signTransaction.test.ts).
import sha3 from "js-sha3";

export function keccak256Bytes(data: Uint8Array): Uint8Array {
  return new Uint8Array(sha3.keccak256.arrayBuffer(data));
}
