import { LIMITS } from './limits';

/**
 * How deep and how wide a JSON document may be. A size limit alone does not
 * bound the work of a document: 12 KB of `[` nest 6,000 levels deep, which
 * `JSON.parse` builds without complaint but every recursive reader after it
 * (`JSON.stringify`, a schema check, a plugin's own parser) fails on with a
 * stack overflow. Every place that takes JSON from outside checks this before
 * it accepts the document.
 */
export interface JsonShapeLimits {
  /** Most arrays and objects nested in one another; a scalar document has depth 0. */
  maxDepth: number;
  /** Most members of one object or elements of one array. */
  maxEntries: number;
}

/** The limits of every document on the wire and of the admin API (see LIMITS). */
export const JSON_SHAPE_LIMITS: JsonShapeLimits = Object.freeze({
  maxDepth: LIMITS.maxJsonDepth,
  maxEntries: LIMITS.maxJsonEntries,
});

/**
 * The limits of an incoming chat event (a QQ Bot webhook body, a console
 * message): lower in depth than the wire's, so the event still fits when the
 * host wraps it in a frame or a delivery body for plugins.
 */
export const EVENT_JSON_SHAPE_LIMITS: JsonShapeLimits = Object.freeze({
  maxDepth: LIMITS.maxEventJsonDepth,
  maxEntries: LIMITS.maxJsonEntries,
});

/** Why a document is refused: too deep or too wide, where, and a sentence for the error message. */
export interface JsonShapeViolation {
  kind: 'depth' | 'entries';
  /** The limit that was passed. */
  limit: number;
  /** Offset (UTF-16 unit or byte, as given) of the character that passed it. */
  offset: number;
  message: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/**
 * The comma counts of checkJsonShape, kept between calls: allocating a typed
 * array per document cost more than scanning a small frame. The scan is
 * synchronous, so one array serves every call.
 */
let commasByLevel = new Int32Array(0);

/**
 * Scans JSON text for nesting deeper than `limits.maxDepth` or a container with
 * more than `limits.maxEntries` entries, in one pass without building
 * anything, so it runs before `JSON.parse`. It does not check the syntax:
 * text that is not JSON either passes here and fails the parser, or is
 * refused here first. Takes a string or its UTF-8 bytes (multi-byte sequences
 * never contain the ASCII characters it looks at). Browser-safe.
 *
 * @returns the first violation, or null when the document is within the limits.
 */
export function checkJsonShape(text: string | Uint8Array, limits: JsonShapeLimits = JSON_SHAPE_LIMITS): JsonShapeViolation | null {
  // Read in place, not through a function per character: the framing checks every frame it reads.
  const str = typeof text === 'string' ? text : null;
  const bytes = typeof text === 'string' ? null : text;
  const length = text.length;
  // Commas seen at each open level: a level with n commas has n + 1 entries. Each level is zeroed as it opens.
  if (commasByLevel.length < limits.maxDepth + 1) commasByLevel = new Int32Array(limits.maxDepth + 1);
  const commas = commasByLevel;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const c = str !== null ? str.charCodeAt(i) : bytes![i]!;
    if (c === QUOTE) {
      // Skip the string: only a quote that is not escaped ends it.
      for (i++; i < length; i++) {
        const s = str !== null ? str.charCodeAt(i) : bytes![i]!;
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (depth === limits.maxDepth) {
        return {
          kind: 'depth',
          limit: limits.maxDepth,
          offset: i,
          message: `arrays and objects nest deeper than ${limits.maxDepth} levels`,
        };
      }
      depth++;
      commas[depth] = 0;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth > 0) depth--;
    } else if (c === COMMA) {
      if (depth > 0 && ++commas[depth]! >= limits.maxEntries) {
        return {
          kind: 'entries',
          limit: limits.maxEntries,
          offset: i,
          message: `an array or object has more than ${limits.maxEntries} entries`,
        };
      }
    }
  }
  return null;
}

/** The outcome of {@link parseJsonWithin}. */
export type JsonWithinResult =
  | { ok: true; value: unknown }
  | { ok: false; reason: 'shape'; violation: JsonShapeViolation; message: string }
  | { ok: false; reason: 'syntax'; message: string };

/**
 * Checks the shape of JSON text (see {@link checkJsonShape}), then parses it.
 * A leading byte-order mark is not removed: callers that allow one strip it first.
 */
export function parseJsonWithin(text: string, limits: JsonShapeLimits = JSON_SHAPE_LIMITS): JsonWithinResult {
  const violation = checkJsonShape(text, limits);
  if (violation) return { ok: false, reason: 'shape', violation, message: violation.message };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, reason: 'syntax', message: (e as Error).message };
  }
}
