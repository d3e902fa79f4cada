/**
 * The content types an upload (media.upload) is checked against by its first bytes (docs/protocol/v2.md 4.12):
 * the image types the host takes, and PDF. The host's media store and the SDKs' test kits read the same table.
 */
export const UPLOAD_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

const ascii = (head: Uint8Array, from: number, to: number): string => String.fromCharCode(...head.subarray(from, to));

const SIGNATURES: Readonly<Record<string, (head: Uint8Array) => boolean>> = {
  'image/png': (h) => [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => h[i] === b),
  'image/jpeg': (h) => h[0] === 0xff && h[1] === 0xd8 && h[2] === 0xff,
  'image/gif': (h) => ['GIF87a', 'GIF89a'].includes(ascii(h, 0, 6)),
  'image/webp': (h) => ascii(h, 0, 4) === 'RIFF' && ascii(h, 8, 12) === 'WEBP',
  'application/pdf': (h) => ascii(h, 0, 5) === '%PDF-',
};

/** How many first bytes the checks read. */
export const MEDIA_SIGNATURE_BYTES = 16;

/** The checked type the first bytes are; undefined for any other. */
export function sniffMediaType(head: Uint8Array): string | undefined {
  return Object.keys(SIGNATURES).find((type) => SIGNATURES[type]!(head));
}

/**
 * Why `contentType` cannot be taken for bytes starting with `head` (a sentence), or null when it can: an image
 * type other than PNG, JPEG, GIF or WebP, or a checked type whose signature the bytes lack. Types without a
 * signature here (text/csv, application/zip, ...) are taken as declared.
 */
export function mediaTypeProblem(contentType: string, head?: Uint8Array): string | null {
  if (contentType.startsWith('image/') && !(UPLOAD_IMAGE_TYPES as readonly string[]).includes(contentType)) {
    return `the host takes images as ${UPLOAD_IMAGE_TYPES.join(', ')}, not ${contentType}; convert the image, or upload it as a file`;
  }
  const check = SIGNATURES[contentType];
  if (!head || !check || check(head)) return null;
  const actual = sniffMediaType(head);
  return `the upload declares ${contentType}, but its bytes ${actual ? `are ${actual}` : `do not start with the ${contentType} signature`}; declare the type the bytes have`;
}
