import request from 'supertest';
import { createTestHost, until, type TestHost } from './harness';

// A plugin writing short stderr lines in a tight loop (one write per line) beside a plugin that answers the
// console. Past its log rate the flooder's stderr is counted unread and left unread for a while, so its writes
// block: the host reads a bounded number of its lines, stays responsive and keeps a small heap. The latency
// of the other plugin is measured by the benchmark (bench/stderr-flood.ts), not asserted here.
const FLOOD_SECONDS = 6;
const RATE = 500;
const BURST = 2_000;

describe('a plugin flooding stderr', () => {
  let host: TestHost;

  beforeAll(() => {
    host = createTestHost({ pingIntervalMilliseconds: 15_000 });
  });
  afterAll(async () => {
    await host.close();
  });

  it('is read only within bounds: the host answers another plugin throughout, drops are counted, the heap stays small', async () => {
    const echo = host.install({ pluginId: 'com.example.echo', manifest: { permissions: ['messages.reply'] } });
    const flooder = host.install({
      pluginId: 'com.example.flooder',
      args: ['flood-stderr', '--flood-line-by-line'],
      // Events of another conversation only: the console's answers wait for no delivery to the flooder.
      manifest: { commands: [], eventSubscriptions: [{ eventType: 'message.created', conversationIds: ['elsewhere'] }] },
    });
    let logged = 0;
    let dropped = 0;
    let floodNotice = '';
    host.logs.subscribe((pluginId, line) => {
      if (pluginId !== flooder) return;
      if (line.stream === 'stderr') logged++;
      const m = /^(\d+) log lines? dropped: the plugin logs faster than/.exec(line.message);
      if (m) dropped += Number(m[1]);
      if (line.message.startsWith('stderr flood:')) floodNotice = line.message;
    });
    await host.runtime.start(echo);
    await host.runtime.start(flooder);
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    let answered = 0;
    let heapPeak = heapBefore;
    while (performance.now() - started < FLOOD_SECONDS * 1000) {
      const res = await request(host.app)
        .post('/api/console/messages')
        .send({ conversation: { type: 'c2c', id: 'u1' }, sender: { id: 'u1' }, text: `/echo ping ${answered}` });
      expect(res.status).toBe(200);
      expect(res.body.outbound[0].body.content).toBe(`ping ${answered}`);
      answered++;
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
      await new Promise((r) => setTimeout(r, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    expect(host.runtime.status(flooder)?.state).toBe('running');
    await until(() => dropped > 0, 'the summary of dropped lines');
    // Within the rate: at most the burst plus the rate per second was logged.
    expect(logged).toBeGreaterThan(0);
    expect(logged).toBeLessThanOrEqual(BURST + RATE * (seconds + 2));
    // What the host read at all stays near the rate: a flood of hundreds of thousands of lines a second is left
    // in the pipe, where it blocks the flooder. (Read on without pausing, the host read about 290,000 in 6 s here.)
    expect(logged + dropped).toBeLessThan(40 * RATE * seconds);
    expect(answered).toBeGreaterThan(10);
    expect(heapPeak - heapBefore).toBeLessThan(64 * 1024 * 1024);
    // Its writes do not block (a Node.js plugin queues them), so it runs at the lowest CPU priority instead.
    expect(floodNotice).toMatch(/^stderr flood: .* now run at the lowest CPU priority$/);
    await host.runtime.stop(flooder);
    await host.runtime.stop(echo);
  }, 60_000);
});
