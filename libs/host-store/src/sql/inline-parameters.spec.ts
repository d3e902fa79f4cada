import { Script } from 'node:vm';
import { EMBEDDED_WORKER_SOURCE } from './embedded-worker';
import { inlineParameters } from './inline-parameters';

describe('inlineParameters', () => {
  it('writes each parameter as one quoted literal, a single quote doubled inside', () => {
    expect(inlineParameters('SELECT $1::text, $2', ["it's", 'a\\b'])).toBe("SELECT 'it''s'::text, 'a\\b'");
    expect(inlineParameters("INSERT INTO t VALUES ($1) -- x'", ["'); DROP TABLE t; --"])).toBe(
      "INSERT INTO t VALUES ('''); DROP TABLE t; --') -- x'",
    );
  });

  it('writes numbers, booleans, dates, NULL, bytes, arrays and objects', () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    expect(inlineParameters('$1 $2 $3 $4 $5 $6', [12.5, 7n, true, at, null, undefined])).toBe(
      "'12.5' '7' 'true' '2026-01-02T03:04:05.000Z' NULL NULL",
    );
    expect(inlineParameters('$1::bytea', [new Uint8Array([0, 15, 255])])).toBe("'\\x000fff'::bytea");
    expect(inlineParameters('$1::text[]', [['a', 'b"c', 'd\\e', "f'g", null]])).toBe(`'{"a","b\\"c","d\\\\e","f''g",NULL}'::text[]`);
    expect(inlineParameters('$1::jsonb', [{ text: "it's" }])).toBe(`'{"text":"it''s"}'::jsonb`);
  });

  it('leaves placeholders alone inside literals, quoted identifiers, comments and dollar-quoted bodies', () => {
    const sql = `SELECT '$1', 'it''s $1', "col$1", $1 -- $1\n/* $1 */ $$ $1 $$ $tag$ $1 $tag$ $2`;
    expect(inlineParameters(sql, ['x', 'y'])).toBe(`SELECT '$1', 'it''s $1', "col$1", 'x' -- $1\n/* $1 */ $$ $1 $$ $tag$ $1 $tag$ 'y'`);
    expect(inlineParameters('SELECT $10, $1', [...'abcdefghij'])).toBe("SELECT 'j', 'a'");
  });

  it('refuses a NUL character, a placeholder without a parameter, and a number that is not finite', () => {
    expect(() => inlineParameters('SELECT $1', ['a\u0000b'])).toThrow(expect.objectContaining({ code: '22021' }));
    expect(() => inlineParameters('SELECT $1', [['a\u0000']])).toThrow(/0x00/);
    expect(() => inlineParameters('SELECT $2', ['a'])).toThrow(/\$2 but has 1 parameters/);
    expect(() => inlineParameters('SELECT $1', [Number.NaN])).toThrow(/finite/);
  });

  it('runs alone, as the embedded database worker runs it: from its source text', () => {
    const again = new Function(`return (${inlineParameters.toString()});`)() as typeof inlineParameters;
    expect(again('SELECT $1, $2::jsonb', ["o'k", { a: [1] }])).toBe(inlineParameters('SELECT $1, $2::jsonb', ["o'k", { a: [1] }]));
    // The worker's whole source, with the function written into it, compiles.
    expect(() => new Script(EMBEDDED_WORKER_SOURCE)).not.toThrow();
  });
});
