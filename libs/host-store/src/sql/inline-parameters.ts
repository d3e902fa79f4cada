/**
 * `sql` with its placeholders `$1`, `$2`, ... replaced by `params` written as
 * SQL literals, for PostgreSQL's simple query protocol.
 *
 * Why: PGlite answers a parameterised query in six passes through its
 * PostgreSQL loop (parse, describe, bind, describe, execute, sync), a simple
 * query in one, and each pass costs about as much as a small statement's own
 * work. The embedded database's thread runs every statement of the host this
 * way (see embedded-worker.ts), which about halves its time per statement.
 *
 * Safe by construction, not by escaping user text into arbitrary places: each
 * value becomes one quoted literal (a single quote doubled inside it, which is
 * all a literal needs while `standard_conforming_strings` is on: the embedded
 * settings pin it), of unknown type like a parameter, so the statement's casts
 * and context type it as before. Numbers and booleans are quoted too. A value
 * holding a NUL character is refused, as the server refuses it in a parameter
 * (a NUL would end the query text early). Placeholders are found outside
 * quoted literals, quoted identifiers, comments and dollar-quoted bodies.
 * Statements may not use `E'...'` literals (backslash escapes are not read).
 *
 * Values: null/undefined → NULL; strings; finite numbers and bigints;
 * booleans; Dates (ISO text); Uint8Array (bytea hex); arrays of those
 * (PostgreSQL array text); any other object as its JSON text.
 *
 * Self-contained on purpose: the embedded database's worker runs its source
 * text (`inlineParameters.toString()`), so it may use nothing outside itself.
 */
export function inlineParameters(sql: string, params: readonly unknown[]): string {
  const quoted = (s: string): string => {
    if (s.indexOf('\u0000') >= 0) {
      const e = new Error('invalid byte sequence for encoding "UTF8": 0x00') as Error & { code: string };
      e.code = '22021';
      throw e;
    }
    return "'" + s.split("'").join("''") + "'";
  };
  const hex = (b: Uint8Array): string => {
    let out = '\\x';
    for (let i = 0; i < b.length; i++) out += (b[i]! < 16 ? '0' : '') + b[i]!.toString(16);
    return out;
  };
  const plain = (v: unknown): string | null => {
    if (v === null || v === undefined) return null;
    if (typeof v === 'string') return v;
    if (typeof v === 'number') {
      if (!isFinite(v)) throw new Error(`A query parameter is not a finite number: ${v}`);
      return String(v);
    }
    if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
    if (v instanceof Date) return v.toISOString();
    if (v instanceof Uint8Array) return hex(v);
    if (Array.isArray(v))
      return (
        '{' +
        v
          .map((x) => {
            const s = plain(x);
            return s === null ? 'NULL' : '"' + s.replace(/[\\"]/g, (c) => '\\' + c) + '"';
          })
          .join(',') +
        '}'
      );
    return JSON.stringify(v);
  };
  const literal = (v: unknown): string => {
    const s = plain(v);
    return s === null ? 'NULL' : quoted(s);
  };

  let out = '';
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      // A quoted literal or identifier, its quote doubled inside.
      let j = i + 1;
      while (j < n && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const j = sql.indexOf('\n', i);
      const end = j < 0 ? n : j;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const j = sql.indexOf('*/', i + 2);
      const end = j < 0 ? n : j + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '$') {
      const number = /^\$(\d+)/.exec(sql.slice(i, i + 12));
      if (number) {
        const k = Number(number[1]);
        if (k < 1 || k > params.length) throw new Error(`The query uses $${k} but has ${params.length} parameters.`);
        out += literal(params[k - 1]);
        i += number[0].length;
        continue;
      }
      const tag = /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.exec(sql.slice(i, i + 64));
      if (tag) {
        // A dollar-quoted body: copied to its closing tag.
        const j = sql.indexOf(tag[0], i + tag[0].length);
        const end = j < 0 ? n : j + tag[0].length;
        out += sql.slice(i, end);
        i = end;
      } else {
        out += c;
        i++;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
