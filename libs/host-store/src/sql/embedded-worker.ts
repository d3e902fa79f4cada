import { inlineParameters } from './inline-parameters';

/**
 * The embedded database's thread. PGlite (PostgreSQL compiled to
 * WebAssembly) runs its queries on the thread that calls it; here that is a
 * worker thread of its own, so the host's event loop (the event path, the
 * admin API) never waits while the database parses, plans or writes.
 *
 * The worker's code is a string run with `eval`, so it needs no file beside
 * the host's bundle; it loads PGlite from the path the host resolved, and
 * starts it with the settings the host passes (`workerData.settings`, each
 * `name=value`) and initdb's options for a folder without a database.
 *
 * Starting overlaps with the host's own work: the worker compiles PGlite's
 * WebAssembly and reads its file-system bundle at once, while the host may
 * still be copying the database's files from a template; it opens the
 * database when told to (`{ op: 'open' }`, sent once the folder is ready).
 *
 * Every statement runs as a simple query, its parameters written into it as
 * literals ({@link inlineParameters}): one pass through PGlite's PostgreSQL
 * loop instead of six. A query text is prepared the first time it comes
 * (outside a transaction) and run as `EXECUTE name(literals)` after that, so
 * PostgreSQL parses, analyses and plans it once: the host's statements are a
 * few dozen fixed texts, and planning was most of the cost of the complex ones.
 *
 * Messages to the worker: `{ op: 'open' }`, `{ id, op: 'query', sql, params, tx? }`, `{ id, op: 'batch', statements }`
 * (each `{ sql, params }`, run in one transaction: one message for a whole write), `{ id, op: 'begin' }`
 * (answers a transaction id), `{ id, op: 'end', tx, commit }`, `{ id, op: 'listen', channel }`,
 * `{ id, op: 'close' }`. Answers: `{ id, ok: true, value }` or `{ id, ok: false, error: { message, code } }`;
 * notifications: `{ notify: channel, payload }`.
 */
export const EMBEDDED_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const inlineParameters = (${inlineParameters.toString()});
const { readFile } = require('node:fs/promises');
const { join, dirname } = require('node:path');
const { PGlite } = require(workerData.pglite);
let db;
const txs = new Map();
// Each statement text the host sends is prepared once (PREPARE, a named statement of this session) and run
// after that as EXECUTE with its parameters as literals: PostgreSQL parses, analyses and plans it once, not at
// every call. A statement PostgreSQL cannot prepare (not a query, or a parameter whose type it cannot tell)
// runs as before, its parameters inlined.
const prepared = new Map();
const PREPARABLE = /^\\s*(WITH|SELECT|INSERT|UPDATE|DELETE)\\b/i;
// The highest placeholder of a statement, found by the same scan that inlines them.
const highestParameter = (sql) => {
  let top = 0;
  const probe = new Proxy([], {
    get: (_, key) => {
      if (key === 'length') return 65535;
      if (/^\\d+$/.test(String(key))) top = Math.max(top, Number(key) + 1);
      return null;
    },
  });
  inlineParameters(sql, probe);
  return top;
};
async function statement(sql, params, mayPrepare) {
  let known = prepared.get(sql);
  if (known === undefined && mayPrepare && prepared.size < 512) {
    known = null;
    const count = PREPARABLE.test(sql) ? highestParameter(sql) : -1;
    if (count >= 0 && count === params.length) {
      const name = 'hs' + (prepared.size + 1);
      try {
        await db.exec('PREPARE ' + name + ' AS ' + sql);
        known = { name, count };
      } catch {}
    }
    prepared.set(sql, known);
  }
  if (!known) return inlineParameters(sql, params);
  if (known.count === 0) return 'EXECUTE ' + known.name;
  let list = '';
  for (let i = 1; i <= known.count; i++) list += (i > 1 ? ', $' : '$') + i;
  return 'EXECUTE ' + known.name + '(' + inlineParameters(list, params) + ')';
}
let nextTx = 1;
const answer = (id, value) => parentPort.postMessage({ id, ok: true, value });
const fail = (id, e) => parentPort.postMessage({ id, ok: false, error: { message: String((e && e.message) || e), code: e && e.code } });
// Compiled and read now, while the host readies the folder.
const dist = dirname(workerData.pglite);
const artifacts = Promise.all([
  readFile(join(dist, 'pglite.wasm')).then((bytes) => WebAssembly.compile(bytes)),
  readFile(join(dist, 'pglite.data')).then((bytes) => new Blob([bytes])),
]);
artifacts.catch(() => undefined);
let go;
const ready = new Promise((resolve) => (go = resolve));
const opened = ready
  .then(() => artifacts.catch(() => [undefined, undefined]))
  .then(([pgliteWasmModule, fsBundle]) =>
    PGlite.create(workerData.dir, {
      startParams: [...PGlite.defaultStartParams, ...workerData.settings.flatMap((s) => ['-c', s])],
      initDbStartParams: workerData.initdb,
      ...(pgliteWasmModule ? { pgliteWasmModule, fsBundle } : {}),
    }),
  )
  .then((d) => (db = d));
parentPort.on('message', async (m) => {
  if (m.op === 'open') return go();
  try {
    await opened;
    switch (m.op) {
      case 'query': {
        const on = m.tx ? txs.get(m.tx).tx : db;
        const results = await on.exec(await statement(m.sql, m.params || [], !m.tx));
        return answer(m.id, results.length ? results[results.length - 1].rows : []);
      }
      case 'batch': {
        // One simple query of all the statements: PostgreSQL runs them as one transaction, in one call into PGlite.
        const texts = [];
        for (const st of m.statements) texts.push(await statement(st.sql, st.params || [], true));
        const results = await db.exec(texts.join(';\\n'));
        if (results.length !== m.statements.length) throw new Error('A statement of the batch held more than one statement.');
        return answer(m.id, results.map((r) => r.rows));
      }
      case 'begin': {
        const tx = nextTx++;
        const entry = {};
        entry.done = db.transaction((t) => new Promise((resolve, reject) => {
          entry.tx = t;
          entry.resolve = resolve;
          entry.reject = reject;
          txs.set(tx, entry);
          answer(m.id, tx);
        }));
        entry.done.catch((e) => { if (!txs.has(tx) && !entry.tx) fail(m.id, e); });
        return;
      }
      case 'end': {
        const entry = txs.get(m.tx);
        txs.delete(m.tx);
        if (m.commit) entry.resolve(); else entry.reject(new Error('rolled back'));
        try { await entry.done; } catch (e) { if (m.commit) return fail(m.id, e); }
        return answer(m.id, null);
      }
      case 'listen':
        await db.listen(m.channel, (payload) => parentPort.postMessage({ notify: m.channel, payload }));
        return answer(m.id, null);
      case 'close':
        await db.close();
        return answer(m.id, null);
    }
  } catch (e) {
    fail(m.id, e);
  }
});
opened.catch((e) => parentPort.postMessage({ openFailed: { message: String((e && e.message) || e) } }));
`;
