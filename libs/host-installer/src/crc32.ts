import * as zlib from 'node:zlib';

let table: Uint32Array | undefined;

function crc32Js(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const native = (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32;

/** CRC-32 of ZIP entries; the native one (Node 20.15+) is much faster. */
export function crc32(data: Uint8Array): number {
  return native ? native(data) >>> 0 : crc32Js(data);
}
