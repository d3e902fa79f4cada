import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { hostPaths } from '@host/host-core';
import { ServerDatabase } from '@host/host-store';
import { startTestPostgres, type TestPostgres } from '@host/host-store/testing';
import { ConsoleProvider } from '@host/host-console';
import { composeHost, type Host } from './compose';
import { sayAs, within } from './console.spec-helper';
import AdmZip from 'adm-zip';
import { stdioFixturePackage } from './fixture-plugins.spec-helper';

/** The fixture plugin with messages.send and a settings form (it does not take settings.changed: it answers "unknown method"). */
function withSettings(zip: Buffer): Buffer {
  const archive = new AdmZip(zip);
  const manifest = JSON.parse(archive.readAsText('manifest.json'));
  manifest.settings = { configSchema: { greeting: { type: 'string', label: 'Greeting', defaultValue: 'hi' } } };
  manifest.permissions = [...manifest.permissions, 'messages.send'];
  archive.updateFile('manifest.json', Buffer.from(JSON.stringify(manifest)));
  return archive.toBuffer();
}

// Two composed hosts on one PostgreSQL server, with leases renewed every 200 ms for 800 ms: a stdio plugin runs
// on the replica holding its lease, events taken by the other reach it through the durable queue, stop, start
// and restart go to the replica that runs it, and a replica that stops hands its plugins to the other.
const TOKEN = 'cluster-test-token-0123456789abcdef0123456';
const auth = { Authorization: `Bearer ${TOKEN}` };
const ID = 'com.example.leased';
const quiet = { log: () => undefined, httpHealthCheckMilliseconds: 0, runtimeTimings: { pingIntervalMilliseconds: 0 } };

const say = sayAs(TOKEN);

const pluginOf = async (host: Host) =>
  (await request(host.app).get(`/api/plugins/${ID}`).set(auth)).body.plugin as {
    state: string;
    enabled: boolean;
    runtime?: { replica?: string; pid?: number };
  };
const whereRunning = async (host: Host) => {
  const p = await pluginOf(host);
  return `${p.state}${p.runtime?.replica ? ` on ${p.runtime.replica}` : ''}`;
};

/** Installs the fixture plugin through `host` and waits until it runs on `replica`. */
async function installRunning(host: Host, replica: string): Promise<void> {
  const installed = await request(host.app)
    .post('/api/plugins/packages')
    .set(auth)
    .field('startAfterInstall', 'true')
    .attach('package', stdioFixturePackage(ID), 'echo.zip');
  expect(installed.status).toBe(201);
  expect(
    await within(
      5000,
      () => whereRunning(host),
      (w) => w === `running on ${replica}`,
    ),
  ).toBe(`running on ${replica}`);
}

describe('two composed hosts on one PostgreSQL server, with leases', () => {
  let server: TestPostgres;
  let db: ServerDatabase;
  let url: string;
  const dirs: string[] = [];
  const hosts: Host[] = [];
  const logLines: string[] = [];
  let keyFile: string;

  const open = async (replica: string) => {
    const dir = mkdtempSync(join(tmpdir(), `cluster-${replica}-`));
    dirs.push(dir);
    const host = await composeHost({
      paths: hostPaths(dir),
      store: 'sql',
      storeOptions: { databaseUrl: url, hostKeyFile: keyFile, replica },
      adminToken: TOKEN,
      version: '0.0.0-test',
      leaseTimings: { renewMilliseconds: 200, ttlMilliseconds: 800 },
      ...quiet,
      log: (_level, message) => logLines.push(`${replica}: ${message}`),
    });
    hosts.push(host);
    await host.startEnabledPlugins();
    return host;
  };

  beforeAll(async () => {
    server = await startTestPostgres();
    url = await server.createDatabase('leases');
    keyFile = join(mkdtempSync(join(tmpdir(), 'cluster-key-')), 'host.key');
    dirs.push(join(keyFile, '..'));
    writeFileSync(keyFile, 'cd'.repeat(32) + '\n', { mode: 0o600 });
    db = await ServerDatabase.open(url);
  }, 120_000);

  afterAll(async () => {
    for (const h of hosts) await h.close().catch(() => undefined);
    await db?.close();
    await server?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('share admin app sessions: signed in through one replica, used through another, signed out everywhere at once', async () => {
    const one = await open('s1');
    const two = await open('s2');
    try {
      const signIn = async (host: Host) => {
        const res = await request(host.app).post('/api/session').send({ token: TOKEN });
        expect(res.status).toBe(201);
        const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
        return { cookie, csrf: res.body.session.csrfToken as string };
      };
      const s = await signIn(one);
      // Only the digest of the secret is in the database.
      const secret = s.cookie.split('=')[1]!;
      const rows = await db.query<{ token_sha256: string }>('SELECT token_sha256 FROM host_admin_sessions');
      expect(rows).toEqual([{ token_sha256: createHash('sha256').update(secret).digest('hex') }]);
      // The other replica answers it, reads and writes (with the CSRF token) alike.
      expect((await request(two.app).get('/api/session').set('Cookie', s.cookie)).body).toMatchObject({
        authenticatedBy: 'session',
        session: { csrfToken: s.csrf },
      });
      await request(two.app).get('/api/plugins').set('Cookie', s.cookie).expect(200);
      const put = await request(two.app).put(`/api/plugins/${ID}/settings`).set('Cookie', s.cookie).send({ values: {} });
      expect(put.body.error?.code).toBe('CSRF_TOKEN_INVALID');
      // Signed out through the second: the first refuses it at once.
      expect((await request(two.app).delete('/api/session').set('Cookie', s.cookie).set('X-CSRF-Token', s.csrf)).body).toEqual({
        signedOut: true,
      });
      const after = await request(one.app).get('/api/plugins').set('Cookie', s.cookie);
      expect({ status: after.status, code: after.body.error?.code }).toEqual({ status: 401, code: 'SESSION_EXPIRED' });
      expect(await db.query('SELECT 1 FROM host_admin_sessions')).toEqual([]);
      // A session outlives the replica that began it.
      const kept = await signIn(two);
      await two.close();
      hosts.splice(hosts.indexOf(two), 1);
      await request(one.app).get('/api/plugins').set('Cookie', kept.cookie).expect(200);
    } finally {
      for (const h of [one, two]) if (hosts.includes(h)) await h.close();
      hosts.splice(0, hosts.length, ...hosts.filter((h) => h !== one && h !== two));
    }
  }, 30_000);

  it('takes over the leases a killed process of the same name left, when it restarts at once', async () => {
    const first = await open('a');
    await installRunning(first, 'a');
    await first.close();
    hosts.splice(hosts.indexOf(first), 1);
    // As if that process had been killed: its lease still names it, for long after its restart.
    await db.query(`UPDATE host_plugin_leases SET holder = 'a', expires_at = now() + interval '1 hour' WHERE plugin_id = $1`, [ID]);
    const again = await open('a');
    try {
      expect(
        await within(
          5000,
          async () => again.runtime.status(ID)?.state,
          (s) => s === 'running',
        ),
      ).toBe('running');
      // Given up by its first lease round (before it takes plugins over), then taken as free, or taken over at once.
      expect(logLines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            new RegExp(
              `^a: cluster: (gave up the lease of ${ID} that an earlier process of a left|took over the lease of ${ID} from an earlier process of a)`,
            ),
          ),
        ]),
      );
      const answered = await say(again, '/echo after the restart');
      expect(answered.body.deliveries).toEqual([expect.objectContaining({ pluginId: ID, state: 'completed' })]);
    } finally {
      await again.close();
      hosts.splice(hosts.indexOf(again), 1);
      await db.query('DELETE FROM host_plugin_leases');
      await request((await open('cleanup')).app)
        .delete(`/api/plugins/${ID}`)
        .set(auth);
      const cleanup = hosts.pop()!;
      await cleanup.close();
    }
  }, 60_000);

  it('routes again, from a live replica, the events a replica that is gone left in its inbox', async () => {
    const live = await open('live');
    try {
      await installRunning(live, 'live');
      // An event a replica took (kept in its inbox) before it died for good: it never beats again.
      const taken = (await say(live, '/echo first')).body.eventId as string;
      const event = { ...live.dispatcher.events.get(taken)!.event, eventId: 'left-by-ghost', text: '/echo left behind' };
      await db.query(
        `INSERT INTO host_event_inbox (event_id, origin, event, accepted_at) VALUES ($1, 'ghost', $2, now() - interval '1 hour')`,
        [event.eventId, JSON.stringify(event)],
      );
      // Another it had queued for the plugin before it died: the row names it as the origin.
      const queued = { ...event, eventId: 'queued-by-ghost', text: '/echo queued behind' };
      await db.query(
        `INSERT INTO host_event_inbox (event_id, origin, event, accepted_at) VALUES ($1, 'ghost', $2, now() - interval '1 hour')`,
        [queued.eventId, JSON.stringify(queued)],
      );
      await db.query(`INSERT INTO host_event_queue (event_id, plugin_id, origin, event, state) VALUES ($1, $2, 'ghost', $3, 'pending')`, [
        queued.eventId,
        ID,
        JSON.stringify(queued),
      ]);
      // Within a lease round the live replica routes it: delivered once, replied to, logged final, out of the inbox.
      const record = await within(
        10_000,
        async () => live.dispatcher.events.get('left-by-ghost'),
        (r) => r?.completedAt != null,
      );
      expect(record?.deliveries).toEqual([expect.objectContaining({ pluginId: ID, state: 'completed' })]);
      expect(record?.outbound).toEqual([expect.objectContaining({ pluginId: ID })]);
      expect(
        await within(
          5000,
          () => db.query('SELECT origin FROM host_event_inbox WHERE event_id = $1', ['left-by-ghost']),
          (rows) => rows.length === 0,
        ),
      ).toEqual([]);
      expect(await db.query('SELECT attempts FROM host_event_queue WHERE event_id = $1', ['left-by-ghost'])).toEqual([{ attempts: 1 }]);
      // The queued one is claimed and delivered once; its outcome, announced to the gone origin, reaches the record here.
      const behind = await within(
        10_000,
        async () => live.dispatcher.events.get('queued-by-ghost'),
        (r) => r?.completedAt != null,
      );
      expect(behind?.deliveries).toEqual([expect.objectContaining({ pluginId: ID, state: 'completed' })]);
      expect(await db.query('SELECT attempts, state FROM host_event_queue WHERE event_id = $1', ['queued-by-ghost'])).toEqual([
        { attempts: 1, state: 'done' },
      ]);
      expect(logLines).toContain('live: cluster: routing again 2 accepted events of a replica that stopped without finishing them');
      // The live replica's own events stay its own: it beats.
      expect(await db.query(`SELECT name FROM host_replicas WHERE name = 'live' AND expires_at > now()`)).toEqual([{ name: 'live' }]);
    } finally {
      await request(live.app).delete(`/api/plugins/${ID}`).set(auth);
      await live.close();
      hosts.splice(hosts.indexOf(live), 1);
      await db.query('DELETE FROM host_plugin_leases');
    }
  }, 30_000);

  it('run a plugin on one replica, deliver to it from the other, and move it when its replica stops', async () => {
    const a = await open('a');
    const b = await open('b');
    const installed = await request(a.app)
      .post('/api/plugins/packages')
      .set(auth)
      .field('startAfterInstall', 'true')
      .attach('package', withSettings(stdioFixturePackage(ID)), 'echo.zip');
    expect(installed.status).toBe(201);
    // a took the lease; b shows the same state and where it runs, and does not run it.
    expect(
      await within(
        2000,
        () => whereRunning(b),
        (s) => s === 'running on a',
      ),
    ).toBe('running on a');
    expect(await whereRunning(a)).toBe('running on a');
    expect(b.runtime.isRunning(ID)).toBe(false);

    // An event taken by b: queued, delivered on a, answered through b with the plugin's one reply.
    const fromB = await say(b, '/echo via b');
    expect(fromB.body.deliveries).toEqual([expect.objectContaining({ pluginId: ID, accepted: true, state: 'completed' })]);
    expect(fromB.body.outbound).toEqual([
      expect.objectContaining({
        pluginId: ID,
        body: expect.objectContaining({ markdown: { content: '<qqbot-at-user id="u1" /> via b' } }),
      }),
    ]);
    const row = await db.query<{ state: string; origin: string; claimed_by: string }>(
      'SELECT state, origin, claimed_by FROM host_event_queue WHERE event_id = $1',
      [fromB.body.eventId],
    );
    expect(row).toEqual([{ state: 'done', origin: 'b', claimed_by: expect.stringMatching(/^a\//) }]);
    // An event taken by a itself is queued too (claimed at once) and answered as on one host.
    expect((await say(a, '/echo on a')).body.outbound).toEqual([expect.objectContaining({ pluginId: ID })]);

    // The same event taken by both (a provider retrying through another replica): delivered once, one reply.
    const consoleEvent = (await say(b, '/echo twice')).body.eventId as string;
    const same = b.dispatcher.events.get(consoleEvent)!.event;
    const again = await a.dispatcher.dispatch({ ...same });
    await a.dispatcher.whenCompleted(again.eventId);
    const rows = await db.query<{ attempts: number }>('SELECT attempts FROM host_event_queue WHERE event_id = $1', [consoleEvent]);
    expect(rows).toEqual([{ attempts: 1 }]);
    const replies = await db.query<{ n: number }>('SELECT n FROM host_event_replies WHERE event_id = $1', [consoleEvent]);
    expect(replies).toEqual([{ n: 1 }]);

    // One event log: both replicas list the same events, those each took, with the plugin's delivery and reply
    // (each writes its own behind by at most 200 ms: listed once both have written them).
    const list = () => Promise.all([a, b].map((h) => request(h.app).get(`/api/events?limit=50&pluginId=${ID}`).set(auth)));
    await list();
    const listed = await list();
    const shown = listed.map((r) => (r.body.events as { eventId: string }[]).map((e) => e.eventId));
    expect(shown[0]).toEqual(shown[1]);
    expect(shown[0]).toEqual(expect.arrayContaining([fromB.body.eventId, consoleEvent]));
    const viaB = (listed[0]!.body.events as { eventId: string; deliveries: unknown[]; outbound: unknown[] }[]).find(
      (e) => e.eventId === fromB.body.eventId,
    )!;
    expect(viaB.deliveries).toEqual([expect.objectContaining({ pluginId: ID, state: 'completed' })]);
    expect(viaB.outbound).toHaveLength(1);

    // Stopped through b: a stops it and gives the lease up; both agree; it is disabled.
    const stopped = await request(b.app).post(`/api/plugins/${ID}/stop`).set(auth);
    expect(stopped.status).toBe(200);
    expect(stopped.body.plugin).toMatchObject({ state: 'stopped', enabled: false });
    // b was answered by a through a notification once a had stopped it (not by reading the lease until it changed).
    expect(logLines).toContain(`b: cluster: replica a answered the stop of ${ID}`);
    expect(a.runtime.isRunning(ID)).toBe(false);
    expect(
      await within(
        1000,
        () => whereRunning(a),
        (s) => s === 'stopped',
      ),
    ).toBe('stopped');
    // Nobody takes it while it is disabled.
    await new Promise((r) => setTimeout(r, 1000));
    expect([a.runtime.isRunning(ID), b.runtime.isRunning(ID)]).toEqual([false, false]);

    // Started through b: b runs it now.
    expect((await request(b.app).post(`/api/plugins/${ID}/start`).set(auth)).body.plugin).toMatchObject({
      state: 'running',
      runtime: { replica: 'b' },
    });
    expect(
      await within(
        1000,
        () => whereRunning(a),
        (s) => s === 'running on b',
      ),
    ).toBe('running on b');
    // Settings saved through a reach the plugin on b, and a answers with what b's plugin made of them.
    const saved = await request(a.app)
      .put(`/api/plugins/${ID}/settings`)
      .set(auth)
      .send({ values: { greeting: 'hello' } });
    expect(saved.status).toBe(200);
    expect(saved.body.delivery).toMatchObject({
      status: 'restartRequired',
      message: expect.stringContaining(`${ID} did not take the new settings while running`),
    });
    // Restarted through a: b restarts it (a new process).
    const pid = b.runtime.status(ID)?.pid;
    const restarted = await request(a.app).post(`/api/plugins/${ID}/restart`).set(auth);
    expect(restarted.status).toBe(200);
    // a answers with the state b reported once it had restarted the plugin: a new process, on b.
    expect(restarted.body.plugin).toMatchObject({ state: 'running', runtime: { replica: 'b' } });
    expect(restarted.body.plugin.runtime.pid).not.toBe(pid);
    expect(logLines).toContain(`a: cluster: replica b answered the restart of ${ID}`);
    expect(
      await within(
        3000,
        async () => b.runtime.status(ID),
        (s) => s?.state === 'running' && s.pid !== pid,
      ),
    ).toMatchObject({
      state: 'running',
    });
    expect(a.runtime.isRunning(ID)).toBe(false);

    // b stops (as on SIGTERM): it gives its leases up and a takes the plugin over, then answers a's events.
    await b.close();
    hosts.splice(hosts.indexOf(b), 1);
    expect(
      await within(
        3000,
        () => whereRunning(a),
        (s) => s === 'running on a',
      ),
    ).toBe('running on a');
    expect((await say(a, '/echo after b')).body.outbound).toEqual([expect.objectContaining({ pluginId: ID })]);

    // A replica died while the plugin handled two events (simulated: rows claimed by a process that is gone). For one, the
    // plugin's messages.send had gone out and was recorded; for the other, its reply was recorded but never marked sent.
    const sent = jest.spyOn(ConsoleProvider.prototype, 'send');
    try {
      const first = (await say(a, '/send group:g2 only once')).body.eventId as string;
      const [recorded] = await db.query<{ digest: string; request: unknown; result: unknown }>(
        'SELECT digest, request, result FROM host_event_sends WHERE event_id = $1',
        [first],
      );
      expect(recorded).toMatchObject({ result: { accepted: true, target: { type: 'group', id: 'g2' } } });
      const [template] = await db.query<{ event: Record<string, unknown> }>('SELECT event FROM host_event_queue WHERE event_id = $1', [
        first,
      ]);
      const ghostEvent = (eventId: string, command: { name: string; args: string }) => ({
        ...template!.event,
        eventId,
        message: { ...(template!.event['message'] as object), text: `/${command.name} ${command.args}` },
        command: { ...(template!.event['command'] as object), ...command },
      });
      const ghost = 'gone/00000000';
      const enqueueGhost = (eventId: string, command: { name: string; args: string }) =>
        db.query(
          `INSERT INTO host_event_queue (event_id, plugin_id, origin, event, state, claimed_by, attempts) VALUES ($1, $2, 'gone', $3, 'claimed', $4, 1)`,
          [eventId, ID, JSON.stringify(ghostEvent(eventId, command)), ghost],
        );
      await enqueueGhost('ghost-send', { name: 'send', args: 'group:g2 only once' });
      await db.query(
        `INSERT INTO host_event_sends (event_id, plugin_id, n, digest, request, claimed_by, result, sent_at) VALUES ('ghost-send', $1, 1, $2, $3, $4, $5, now())`,
        [ID, recorded!.digest, JSON.stringify(recorded!.request), ghost, JSON.stringify(recorded!.result)],
      );
      sent.mockClear();
      // One at a time: a send is keyed by the one event its plugin handles when it sends (docs/operator/cluster.md).
      await within(
        5000,
        () => db.query<{ state: string }>("SELECT state FROM host_event_queue WHERE event_id = 'ghost-send'"),
        (rows) => rows[0]?.state === 'done',
      );
      await enqueueGhost('ghost-reply', { name: 'echo', args: 'handled again' });
      await db.query(
        `INSERT INTO host_event_replies (event_id, plugin_id, n, sequence, request, claimed_by) VALUES ('ghost-reply', $1, 1, 1, $2, $3)`,
        [ID, JSON.stringify({ message: { format: 'text', parts: [{ type: 'text', text: 'recorded before the crash' }] } }), ghost],
      );
      // a, holding the lease, takes both rows over and delivers them again.
      const done = await within(
        5000,
        () =>
          db.query<{ event_id: string; state: string; attempts: number }>(
            "SELECT event_id, state, attempts FROM host_event_queue WHERE event_id LIKE 'ghost-%' ORDER BY event_id",
          ),
        (rows) => rows.every((r) => r.state === 'done'),
      );
      expect(done).toEqual([
        { event_id: 'ghost-reply', state: 'done', attempts: 2 },
        { event_id: 'ghost-send', state: 'done', attempts: 2 },
      ]);
      const texts = sent.mock.calls.map(([, body]) => JSON.stringify(body));
      // The send went out once (before the crash): the plugin's repeat got the recorded answer.
      expect(texts.filter((t) => t.includes('only once'))).toEqual([]);
      // The reply recorded before the crash went out now, once; the plugin's repeat reply was not sent again.
      expect(texts.filter((t) => t.includes('recorded before the crash'))).toHaveLength(1);
      expect(texts.filter((t) => t.includes('handled again'))).toEqual([]);
      expect(
        await db.query("SELECT n, sent_at IS NOT NULL AS sent, claimed_by FROM host_event_replies WHERE event_id = 'ghost-reply'"),
      ).toEqual([{ n: 1, sent: true, claimed_by: expect.stringMatching(/^a\//) }]);
      const completions = await db.query<{ completion: unknown }>("SELECT completion FROM host_event_queue WHERE event_id LIKE 'ghost-%'");
      expect(completions).toEqual([
        { completion: { error: null, durationMs: expect.any(Number) } },
        { completion: { error: null, durationMs: expect.any(Number) } },
      ]);
    } finally {
      sent.mockRestore();
    }

    // Several events in flight at once: each send names its handler's event (eventId, as the SDKs do) and is recorded
    // as send 1 of that event, whichever handler sends first. A send naming no event while the others are in flight
    // cannot be told apart (it goes out unrecorded), which shows they were in flight together.
    const sendsOf = (eventId: string) =>
      db.query<{ plugin_id: string; n: number; text: string; event: string | null; sent: boolean }>(
        `SELECT plugin_id, n, request #>> '{message,parts,0,text}' AS text, request ->> 'eventId' AS event, sent_at IS NOT NULL AS sent
         FROM host_event_sends WHERE event_id = $1 ORDER BY plugin_id, n`,
        [eventId],
      );
    const inFlight = await Promise.all([
      ...[1, 2, 3].map((i) => say(a, `/send group:g${i} +event wait=${900 - 200 * i} concurrent ${i}`)),
      say(a, '/send group:g4 wait=200 named no event'),
    ]);
    const ids = inFlight.map((r) => r.body.eventId as string);
    expect(inFlight.map((r) => r.body.deliveries[0]?.completion?.error ?? null)).toEqual([null, null, null, null]);
    for (const [i, id] of ids.slice(0, 3).entries()) {
      expect(await sendsOf(id)).toEqual([{ plugin_id: ID, n: 1, text: `concurrent ${i + 1}`, event: id, sent: true }]);
    }
    expect(await sendsOf(ids[3]!)).toEqual([]);

    // An eventId the plugin is not handling here is ignored: a made-up one, or its own event that completed. The send
    // goes out unrecorded, and is not counted against the one event in flight.
    const made = await say(a, `/send group:g5 event=not-an-event made up`);
    expect(made.body.deliveries[0].completion.error).toBeNull();
    expect(await sendsOf('not-an-event')).toEqual([]);
    expect(await sendsOf(made.body.eventId)).toEqual([]);
    const late = await say(a, `/send group:g5 event=${ids[0]} after its event`);
    expect(late.body.deliveries[0].completion.error).toBeNull();
    expect((await sendsOf(ids[0]!)).map((r) => r.text)).toEqual(['concurrent 1']);
    expect(await sendsOf(late.body.eventId)).toEqual([]);

    // Another plugin naming an event this one handles now records nothing for either (sends are keyed by the sender).
    // (supertest sends when asked for the answer: asked at once, awaited below)
    const handled = say(a, '/send group:g6 +event wait=800 mine').then((r) => r);
    const [busy] = await within(
      3000,
      () =>
        db.query<{ event_id: string }>(
          "SELECT event_id FROM host_event_queue WHERE plugin_id = $1 AND state <> 'done' AND event::text LIKE '%wait=800 mine%'",
          [ID],
        ),
      (rows) => rows.length === 1,
    );
    await expect(
      a.dispatcher.outbound.send({
        pluginId: 'com.example.intruder',
        kind: 'send',
        eventId: busy!.event_id,
        target: { type: 'group', id: 'g6' },
        message: { format: 'text', parts: [{ type: 'text', text: 'not mine' }] },
      }),
    ).rejects.toMatchObject({ code: 'message.permission.denied' });
    expect((await handled).body.eventId).toBe(busy!.event_id);
    expect(await sendsOf(busy!.event_id)).toEqual([{ plugin_id: ID, n: 1, text: 'mine', event: busy!.event_id, sent: true }]);

    // A reply to an event the plugin was not handed is refused as on one host, and nothing is recorded for it.
    await expect(
      a.dispatcher.outbound.send({
        pluginId: ID,
        kind: 'reply',
        eventId: 'not-an-event-of-this-plugin',
        message: { format: 'text', parts: [{ type: 'text', text: 'hi' }] },
      }),
    ).rejects.toMatchObject({ code: 'message.reference.unknown' });
    expect(await db.query("SELECT 1 FROM host_event_replies WHERE event_id = 'not-an-event-of-this-plugin'")).toEqual([]);

    // The database is gone: the event is refused before it is accepted (nothing is delivered unrecorded).
    await server.stop();
    const lost = await say(a, '/echo no database');
    expect({ status: lost.status, code: lost.body.error?.code }).toEqual({ status: 503, code: 'STORE_UNAVAILABLE' });
  }, 60_000);
});
