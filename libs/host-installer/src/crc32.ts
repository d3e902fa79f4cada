import { crc32 as zlibCrc32 } from 'node:zlib';

/** CRC-32 of ZIP entries (zlib's, Node 20.15+; the host's engines require it). */
export function crc32(data: Uint8Array): number {
  return zlibCrc32(data) >>> 0;
}
