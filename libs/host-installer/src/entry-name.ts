import { HostError } from '@host/host-core';

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
export const MAX_NAME_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;
/** Deepest folder nesting accepted; real packages stay far below it. */
export const MAX_NAME_DEPTH = 64;

/** Shows a hostile name safely in messages (control characters escaped). */
export function printableName(name: string): string {
  return JSON.stringify(name).slice(1, -1);
}

/**
 * Decodes a raw entry name. Names must be UTF-8 (or plain ASCII, which is
 * the same): an archive whose names cannot be decoded would unpack to names
 * that differ by platform.
 */
export function decodeEntryName(raw: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new HostError(
      'INSTALL_INVALID_ENTRY_NAME',
      `An archive entry name is not valid UTF-8 (bytes ${Buffer.from(raw).toString('hex').slice(0, 64)}). Re-create the ZIP with a tool that stores UTF-8 names.`,
      { entry: Buffer.from(raw).toString('latin1') },
    );
  }
}

export interface SafeEntryName {
  /** Normalised relative path with "/" separators, no "." segments, no trailing "/". */
  path: string;
  isDirectory: boolean;
}

/**
 * Checks one entry name and returns its normalised relative path. Every
 * spelling that could leave the package or mean different files on different
 * systems is refused with its own code.
 */
export function checkEntryName(name: string): SafeEntryName {
  const shown = CONTROL.test(name) || name.includes('"') ? printableName(name) : name;
  const fail = (code: ConstructorParameters<typeof HostError>[0], why: string): never => {
    throw new HostError(code, why, { entry: name });
  };
  if (name.length === 0) fail('INSTALL_INVALID_ENTRY_NAME', 'An archive entry has an empty name. Re-create the ZIP.');
  if (CONTROL.test(name)) {
    fail('INSTALL_INVALID_ENTRY_NAME', `Entry "${shown}" has a NUL or control character in its name. Rename the file.`);
  }
  if (name.includes('\\')) {
    fail('INSTALL_BACKSLASH_PATH', `Entry "${shown}" uses "\\" as a separator. Re-create the ZIP with a tool that writes "/" separators.`);
  }
  if (name.startsWith('/')) fail('INSTALL_ABSOLUTE_PATH', `Entry "${shown}" has an absolute path. Re-create the ZIP with relative paths.`);
  if (/^[A-Za-z]:/.test(name)) {
    fail('INSTALL_ABSOLUTE_PATH', `Entry "${shown}" starts with a drive letter. Re-create the ZIP with relative paths.`);
  }
  const isDirectory = name.endsWith('/');
  const segments = (isDirectory ? name.slice(0, -1) : name).split('/');
  if (segments.includes('..')) {
    fail(
      'INSTALL_PATH_TRAVERSAL',
      `Entry "${shown}" climbs out of the package with "..". Re-create the ZIP from inside the package folder.`,
    );
  }
  const kept = segments.filter((s) => s !== '.');
  if (kept.length === 0) fail('INSTALL_INVALID_ENTRY_NAME', `Entry "${shown}" names no file. Re-create the ZIP.`);
  for (const s of kept) {
    if (s === '') fail('INSTALL_INVALID_ENTRY_NAME', `Entry "${shown}" has an empty path segment ("//"). Rename the file.`);
    // ":" selects an alternate data stream on Windows; "a:b" would not be one file everywhere.
    if (s.includes(':')) fail('INSTALL_INVALID_ENTRY_NAME', `Entry "${shown}" has ":" in its name. Rename the file.`);
    if (Buffer.byteLength(s) > MAX_SEGMENT_BYTES) {
      fail('INSTALL_INVALID_ENTRY_NAME', `Entry "${shown}" has a path segment longer than ${MAX_SEGMENT_BYTES} bytes. Shorten it.`);
    }
  }
  const path = kept.join('/');
  if (Buffer.byteLength(path) > MAX_NAME_BYTES) {
    fail('INSTALL_INVALID_ENTRY_NAME', `Entry "${shown.slice(0, 80)}..." is longer than ${MAX_NAME_BYTES} bytes. Shorten the path.`);
  }
  return { path, isDirectory };
}

/**
 * Key under which names collide on case-insensitive or normalising file
 * systems. Lower-casing alone misses letters those systems fold through
 * their upper case ("ſ" and "s", "ς" and "σ", "µ" and "μ"), so the name is
 * upper-cased first; the final NFC puts what case mapping decomposed back.
 */
export function collisionKey(path: string): string {
  return path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}
