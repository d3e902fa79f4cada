import { Socket } from 'node:net';
import { ServerDatabase } from './database';
import { startTestPostgres, type TestPostgres } from '../testing/postgres-server';

// A PostgreSQL server of its own that the tests stop and start again, as an operator's maintenance would: the
// database answers STORE_UNAVAILABLE meanwhile, its listening connection is made again by one loop with backoff
// (never a storm of connections), and everything works again within seconds of the server's return.
let server: TestPostgres;
let url: string;
beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase('outage');
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

/** How many connections this process tries to make to the server while `during` runs (each attempt, refused or not). */
async function countConnects<T>(during: () => Promise<T>): Promise<{ result: T; attempts: number }> {
  const original = Socket.prototype.connect;
  let attempts = 0;
  Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
    if (args[0] === server.port || (args[0] as { port?: unknown })?.port === server.port) attempts++;
    return (original as (...a: unknown[]) => Socket).apply(this, args);
  } as typeof original;
  try {
    return { result: await during(), attempts };
  } finally {
    Socket.prototype.connect = original;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(ms: number, done: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await sleep(50);
  }
  return done();
}

describe.each(['fast', 'immediate'] as const)('a PostgreSQL server stopped (%s) and started again', (mode) => {
  it('fails statements with STORE_UNAVAILABLE, reconnects its one listening connection with backoff, and resumes', async () => {
    const db = await ServerDatabase.open(url, { maxConnections: 4 });
    try {
      const heard: string[] = [];
      const reconnected: string[] = [];
      for (const channel of ['first', 'second'])
        await db.listen(
          channel,
          (p) => heard.push(`${channel} ${p}`),
          () => reconnected.push(channel),
        );
      await db.query("SELECT pg_notify('first', 'before')");
      expect(await until(10_000, () => heard.includes('first before'))).toBe(true);
      expect(db.current()).toEqual({ reachable: true });

      await server.halt(mode);
      // Six seconds without the server and without statements: only the listening connection tries again.
      const outage = await countConnects(async () => {
        await sleep(6000);
        const failed = await db.query('SELECT 1').then(
          () => undefined,
          (e: { code?: string; details?: { since?: string } }) => e,
        );
        return { failed, state: db.current(), checked: await db.check() };
      });
      expect(outage.result.failed).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { since: expect.any(String) } });
      expect(outage.result.state).toMatchObject({ reachable: false, since: expect.any(String), reason: expect.any(String) });
      expect(outage.result.checked.reachable).toBe(false);
      // Backoff from 100 ms doubling to 5 s, less up to half: 4 to 8 attempts in 6 s (and the 2 statements).
      // (The loops of the reconnect storm this replaces made thousands.)
      expect(outage.attempts).toBeGreaterThanOrEqual(3);
      expect(outage.attempts).toBeLessThanOrEqual(10);
      expect(reconnected).toEqual([]);

      await server.start();
      const back = Date.now();
      // The next attempt is at most 5 s away: both channels are told they may have missed notifications.
      expect(await until(10_000, () => reconnected.length === 2)).toBe(true);
      expect(reconnected.sort()).toEqual(['first', 'second']);
      expect(Date.now() - back).toBeLessThan(10_000);
      await db.query("SELECT pg_notify('second', 'after')");
      expect(await until(10_000, () => heard.includes('second after'))).toBe(true);
      expect(db.current()).toEqual({ reachable: true });
      expect(await db.check()).toEqual({ reachable: true });
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe('closing while the server is away', () => {
  it('ends the pool and the reconnect loop at once', async () => {
    const db = await ServerDatabase.open(url);
    await db.listen('c', () => undefined);
    await server.halt('immediate');
    try {
      await sleep(300);
      const closed = await Promise.race([db.close().then(() => 'closed'), sleep(5000).then(() => 'still closing')]);
      expect(closed).toBe('closed');
      // Nothing tries to connect after the close.
      expect((await countConnects(() => sleep(1500))).attempts).toBe(0);
      await expect(db.query('SELECT 1')).rejects.toThrow();
    } finally {
      await server.start();
    }
  }, 30_000);
});
