import { MESSAGE_ERRORS, type MessageErrorCode } from '@host/protocol';

/** A message failure as data: a stable code from the catalogue and a message that says what and where. */
export interface MessageError {
  code: MessageErrorCode;
  message: string;
}

export type MessageResult<T> = { ok: true; value: T } | { ok: false; error: MessageError };

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/**
 * The catalogue text first (what is wrong and the fix), then the specifics
 * (which part, which id), so every user of a code reads the same advice.
 */
export function fail(code: MessageErrorCode, detail?: string): { ok: false; error: MessageError } {
  const base = MESSAGE_ERRORS[code].message;
  return { ok: false, error: { code, message: detail ? `${base} ${detail}` : base } };
}

/** Quotes a value for an error message, cut short so a huge id cannot flood a log line. */
export function quote(value: string, max = 40): string {
  return value.length <= max ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, max))}... (${value.length} characters)`;
}
