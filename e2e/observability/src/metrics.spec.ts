import { api, buildHost, packageForm, startHost, waitForState, type RunningHost } from '@host/e2e-support';
import { sampleSum, sampleValue, type Exposition } from '@host/host-metrics/testing';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePackage, GROUP, say, scrape, scrapeText, scrapeUntil, startBareHttpPlugin, USER } from './support';

// The built host with JSON log lines and metrics on its main listener, one stdio plugin (the misbehaving
// fixture, one handler at a time, events waiting at most 1 s) and later one HTTP plugin that refuses every
// event. A known load goes through the console API, phase by phase, and each family is checked against it
// in the exposition, read by parse-prometheus-text-format.
const PLUGIN = 'com.example.metrics';
const HTTP_PLUGIN = 'com.example.bare-echo';
const ECHOES = 12;

const value = (e: Exposition, name: string, labels: Record<string, string> = {}) => sampleValue(e, name, labels) ?? 0;
const plugin = { plugin_id: PLUGIN };

describe('metrics and JSON log lines of the built host under a known load', () => {
  let dataDir: string;
  let host: RunningHost;
  let bare: ChildProcess | undefined;

  beforeAll(async () => {
    buildHost();
    dataDir = mkdtempSync(join(tmpdir(), 'host-metrics-'));
    // Two deliveries may wait host-wide: a third event is refused at admission.
    host = await startHost(dataDir, { HOST_LOG_FORMAT: 'json', HOST_MAX_WAITING_EVENTS: '2' });
    const zip = fixturePackage(PLUGIN, (m) => {
      m['concurrency'] = { maxConcurrentEvents: 1, queueCapacity: 64, maxWaitMilliseconds: 1000 };
    });
    const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(zip, { startAfterInstall: 'true' }));
    expect(installed.status).toBe(201);
  });

  afterAll(async () => {
    bare?.kill('SIGKILL');
    await host?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  });

  it('needs the admin token on the main listener', async () => {
    expect((await scrapeText(`${host.url}/metrics`, null)).status).toBe(401);
    const wrong = await scrapeText(`${host.url}/metrics`, 'not-the-admin-token-at-all');
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body).error.code).toBe('UNAUTHORIZED');
    const right = await scrapeText(`${host.url}/metrics`);
    expect(right.status).toBe(200);
    expect(right.type).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('counts events, completed deliveries, replies and their latencies', async () => {
    for (let i = 0; i < ECHOES; i++) {
      const r = await say(host, `/echo hello ${i}`);
      expect(r.status).toBe(200);
      expect(r.body.deliveries).toEqual([expect.objectContaining({ pluginId: PLUGIN, state: 'completed' })]);
    }
    const e = await scrapeUntil(
      host,
      'every echo completed',
      (x) => value(x, 'host_event_duration_seconds_count', { provider: 'console' }) === ECHOES,
    );
    expect(e.types.get('host_events_received_total')).toBe('COUNTER');
    expect(value(e, 'host_events_received_total', { provider: 'console' })).toBe(ECHOES);
    expect(value(e, 'host_deliveries_total', { ...plugin, outcome: 'completed' })).toBe(ECHOES);
    expect(value(e, 'host_outbound_messages_total', { provider: 'console', kind: 'reply', result: 'ok' })).toBe(ECHOES);
    for (const h of ['host_handler_duration_seconds', 'host_delivery_decision_seconds']) {
      expect(e.types.get(h)).toBe('HISTOGRAM');
      expect(value(e, `${h}_count`, plugin)).toBe(ECHOES);
      // Every observation is in the +Inf bucket, and a handler that echoes is done within a minute.
      expect(value(e, `${h}_bucket`, { ...plugin, le: '+Inf' })).toBe(ECHOES);
      expect(value(e, `${h}_bucket`, { ...plugin, le: '60' })).toBe(ECHOES);
      expect(value(e, `${h}_sum`, plugin)).toBeGreaterThan(0);
    }
    // The event's end to end time holds its handler's.
    expect(value(e, 'host_event_duration_seconds_sum', { provider: 'console' })).toBeGreaterThanOrEqual(
      value(e, 'host_handler_duration_seconds_sum', plugin) - 0.01 * ECHOES,
    );
    expect(value(e, 'host_plugin_crashes_total', plugin)).toBe(0);
    expect(value(e, 'host_plugin_state', { ...plugin, state: 'running' })).toBe(1);
    // Store calls are timed (the registry is read on every admin request).
    expect(sampleSum(e, 'host_store_operation_duration_seconds_count', { store: 'registry', result: 'ok' })).toBeGreaterThan(0);
    // Process and Node.js metrics with the prefix.
    expect(value(e, 'host_process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(e.samples.has('host_nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('shows waiting events and the age of the oldest, then counts them expired, and an event refused at admission', async () => {
    const before = await scrape(host);
    // The one handler is busy for 2.5 s; two echoes wait for it, longer than their 1 s.
    const slow = say(host, '/slow 2500');
    // At least 1: on the SQL store the delivery also holds a slot of the queue it came through (the durable queue's).
    await scrapeUntil(host, 'the slow handler running', (x) => value(x, 'host_plugin_active_deliveries', plugin) >= 1);
    const waiting = [say(host, '/echo late 1'), say(host, '/echo late 2')];
    const queued = await scrapeUntil(host, 'two waiting events', (x) => value(x, 'host_plugin_waiting_events', plugin) === 2);
    expect(value(queued, 'host_plugin_oldest_waiting_event_age_seconds', plugin)).toBeGreaterThan(0);
    expect(value(queued, 'host_plugin_oldest_waiting_event_age_seconds', plugin)).toBeLessThan(2);
    // Two deliveries wait host-wide (HOST_MAX_WAITING_EVENTS=2): the next event is refused before it is taken.
    const refused = await say(host, '/echo refused');
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('EVENTS_OVERLOADED');
    const late = await Promise.all(waiting);
    for (const r of late) expect(r.body.deliveries[0]).toMatchObject({ state: 'expired', error: { code: 'delivery.expired' } });
    expect((await slow).body.deliveries[0].state).toBe('completed');

    const after = await scrapeUntil(host, 'the queue empty', (x) => value(x, 'host_plugin_waiting_events', plugin) === 0);
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta('host_events_refused_total', { reason: 'host_backlog' })).toBe(1);
    expect(delta('host_deliveries_total', { ...plugin, outcome: 'expired' })).toBe(2);
    expect(delta('host_delivery_errors_total', { ...plugin, code: 'delivery.expired' })).toBe(2);
    expect(delta('host_plugin_expired_events_total', plugin)).toBe(2);
    expect(delta('host_events_received_total', { provider: 'console' })).toBe(3);
    expect(value(after, 'host_plugin_oldest_waiting_event_age_seconds', plugin)).toBe(0);
  });

  it('counts a crash and the restart after it, and logs the failed delivery with the event id the plugin logged', async () => {
    const crash = await say(host, '/crash bye');
    expect(crash.status).toBe(200);
    await waitForState(host, PLUGIN, 'restartPending').catch(() => undefined);
    await waitForState(host, PLUGIN, 'running');
    const e = await scrapeUntil(host, 'a restart', (x) => value(x, 'host_plugin_restarts_total', plugin) === 1);
    expect(value(e, 'host_plugin_crashes_total', plugin)).toBe(1);
    expect(value(e, 'host_deliveries_total', { ...plugin, outcome: 'failed' })).toBe(1);
    expect(value(e, 'host_plugin_state', { ...plugin, state: 'running' })).toBe(1);
    expect(value(e, 'host_plugin_state', { ...plugin, state: 'restartPending' })).toBe(0);

    // The host's JSON line about the delivery and the plugin's own line carry the same event id.
    const eventId: string = crash.body.eventId;
    const lines = host
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        component: 'dispatch',
        pluginId: PLUGIN,
        eventId,
        message: expect.stringContaining(eventId),
      }),
    );
    const logs = await api(host, 'GET', `/api/plugins/${PLUGIN}/logs?tail=200`);
    expect(logs.body.lines.map((l: { message: string }) => l.message)).toContainEqual(`exiting before events.completed of ${eventId}`);
  });

  it("shows an HTTP plugin's circuit open after the failures in a row that open it", async () => {
    const started = await startBareHttpPlugin(join(dataDir, '..', `${HTTP_PLUGIN}.secret-never-written`));
    bare = started.child;
    const registered = await api(host, 'POST', '/api/plugins/http', { baseUrl: started.url });
    expect(registered.status).toBe(201);
    const closed = await scrapeUntil(host, 'the HTTP plugin', (x) => x.samples.get('host_http_plugin_circuit_state')?.length === 3);
    expect(value(closed, 'host_http_plugin_circuit_state', { plugin_id: HTTP_PLUGIN, state: 'closed' })).toBe(1);
    // Without its signing secret the plugin answers 401 to every event: five failures in a row open the circuit.
    // The sixth finds it open: an HTTP plugin whose circuit is open is no recipient until its probe is due.
    const codes = new Map<string, number>();
    for (let i = 0; i < 6; i++) {
      const r = await say(host, `/echo to both ${i}`);
      for (const d of r.body.deliveries as { pluginId: string; error: { code: string } | null }[])
        if (d.pluginId === HTTP_PLUGIN) codes.set(d.error!.code, (codes.get(d.error!.code) ?? 0) + 1);
    }
    expect([...codes.values()].reduce((a, b) => a + b, 0)).toBe(5);
    const open = await scrape(host);
    expect(value(open, 'host_http_plugin_circuit_state', { plugin_id: HTTP_PLUGIN, state: 'open' })).toBe(1);
    expect(value(open, 'host_http_plugin_circuit_state', { plugin_id: HTTP_PLUGIN, state: 'closed' })).toBe(0);
    expect(value(open, 'host_http_plugin_consecutive_failures', { plugin_id: HTTP_PLUGIN })).toBeGreaterThanOrEqual(5);
    expect(value(open, 'host_deliveries_total', { plugin_id: HTTP_PLUGIN, outcome: 'failed' })).toBe(5);
    for (const [code, n] of codes) expect(value(open, 'host_delivery_errors_total', { plugin_id: HTTP_PLUGIN, code })).toBe(n);
    expect(value(open, 'host_deliveries_total', { ...plugin, outcome: 'completed' })).toBe(ECHOES + 1 + 6);
  });

  it('never labels a series with a user, group or event id', async () => {
    const { body } = await scrapeText(`${host.url}/metrics`);
    expect(body).not.toContain(USER);
    expect(body).not.toContain(GROUP);
    expect(body).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });

  it('writes every log line of its own as one JSON object with the same fields', () => {
    const lines = host
      .output()
      .split('\n')
      .filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(parsed)).toEqual(['time', 'level', 'component', 'pluginId', 'eventId', 'message']);
      expect(new Date(parsed['time'] as string).toISOString()).toBe(parsed['time']);
      expect(['info', 'warn', 'error']).toContain(parsed['level']);
    }
    const listening = lines
      .map((l) => JSON.parse(l) as { message: string; component: string })
      .find((l) => l.message.includes('listening on'));
    expect(listening?.component).toBe('host');
    // Each line names the part of the host that wrote it: the delivery failures above came from the dispatcher.
    const components = new Set(lines.map((l) => (JSON.parse(l) as { component: string }).component));
    expect(components.has('host')).toBe(true);
    expect(components.has('dispatch')).toBe(true);
  });
});

describe('where the metrics are served', () => {
  let dataDir: string;
  const running: RunningHost[] = [];
  beforeAll(() => buildHost());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'host-metrics-bind-'));
  });
  afterEach(async () => {
    for (const h of running.splice(0)) await h.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  });

  it('serves /metrics without a token on a listener of its own, and not on the main listener', async () => {
    const host = await startHost(dataDir, { HOST_STORE: 'file' }, ['--metrics-bind', '127.0.0.1:0']);
    running.push(host);
    const m = /metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics) \(no token/.exec(host.output());
    expect(m).not.toBeNull();
    const own = await scrapeText(m![1]!, null);
    expect(own.status).toBe(200);
    expect(own.body).toContain('# TYPE host_events_received_total counter');
    expect((await scrapeText(m![1]!.replace(/\/metrics$/, '/api/plugins'), null)).status).toBe(404);
    const main = await scrapeText(`${host.url}/metrics`);
    expect(main.body).not.toContain('host_events_received_total');
  });

  it('prints a generated admin token as one JSON line too, and it works', async () => {
    const host = await startHost(dataDir, { HOST_STORE: 'file', HOST_ADMIN_TOKEN_FILE: '', HOST_LOG_FORMAT: 'json' });
    running.push(host);
    const lines = host
      .output()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { component: string; message: string });
    const banner = lines.filter((l) => l.message.startsWith('admin token (shown once'));
    expect(banner).toHaveLength(1);
    const token = /: (\S+); open http/.exec(banner[0]!.message)![1]!;
    expect((await scrapeText(`${host.url}/metrics`, token)).status).toBe(200);
  });

  it('serves no metrics when they are off', async () => {
    const host = await startHost(dataDir, { HOST_STORE: 'file', HOST_METRICS_BIND: 'off' });
    running.push(host);
    expect(host.output()).not.toContain('metrics: http');
    expect((await scrapeText(`${host.url}/metrics`)).body).not.toContain('host_events_received_total');
  });

  it('names the setting when the metrics address cannot be used', async () => {
    const first = await startHost(dataDir, { HOST_STORE: 'file' }, ['--metrics-bind', '127.0.0.1:0']);
    running.push(first);
    const taken = /metrics: http:\/\/(127\.0\.0\.1:\d+)\/metrics/.exec(first.output())![1]!;
    const other = mkdtempSync(join(tmpdir(), 'host-metrics-bind-'));
    try {
      await expect(startHost(other, { HOST_STORE: 'file', HOST_METRICS_BIND: taken })).rejects.toThrow(
        new RegExp(`the metrics listener cannot listen on ${taken.replace(/\./g, '\\.')} \\(EADDRINUSE\\); set HOST_METRICS_BIND`),
      );
    } finally {
      rmSync(other, { recursive: true, force: true });
      rmSync(`${other}.admin-token`, { force: true });
    }
  });
});
