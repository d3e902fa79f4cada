import { EventLogsResponseSchema } from '@host/admin-api';
import { hostPaths, type DeliveryRecord, type EventRecord, type LogLine, type Transport } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { createUnavailableRuntime } from '@host/host-installer/testing';
import { FilePluginLogStore } from '@host/host-runtime';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import type { Express } from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from './app';
import { ensureAdminToken } from './auth';
import { FollowableLogStore } from './log-followers';
import { eventLogRoutes } from './routes/event-log-routes';

const STDIO = 'com.example.echo';
const HTTP = 'com.example.remote';

function delivery(pluginId: string, transport: Transport): DeliveryRecord {
  return {
    pluginId,
    transport,
    startedAt: '2026-03-01T10:00:00.000Z',
    state: 'completed',
    sent: true,
    done: true,
    accepted: true,
    intercepted: false,
    error: null,
    completion: null,
  } as DeliveryRecord;
}

function record(eventId: string, deliveries: DeliveryRecord[]): EventRecord {
  return {
    eventId,
    source: 'console',
    receivedAt: '2026-03-01T10:00:00.000Z',
    routedAt: null,
    completedAt: null,
    // The route reads only who the event went to.
    event: { eventId } as EventRecord['event'],
    recipients: deliveries.map((d) => d.pluginId),
    deliveries,
    outbound: [],
    interceptedBy: null,
    replySequence: 0,
  };
}

describe('GET /api/events/{eventId}/logs', () => {
  let dataDir: string;
  let app: Express;
  let token: string;
  let close: () => Promise<void>;
  let logs: FollowableLogStore;
  const events = new Map<string, EventRecord>();

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'event-logs-'));
    const paths = hostPaths(dataDir);
    const store = await JsonRegistryStore.open(paths.stateDir);
    close = () => store.close();
    const runtime = createUnavailableRuntime();
    const installer = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime,
    });
    await installer.init();
    const { hash, generated } = await ensureAdminToken(store);
    token = generated!;
    logs = new FollowableLogStore(new FilePluginLogStore(paths));
    events.clear();
    app = createApp({
      paths,
      store,
      settings: new FileSettingsStore(paths),
      installer,
      runtime,
      adminTokenHash: hash,
      logs,
      apiRoutes: eventLogRoutes({ event: (id) => events.get(id), logs }),
    });
  });
  afterEach(async () => {
    await close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const get = (path: string) => request(app).get(path).set('Authorization', `Bearer ${token}`);
  const line = (message: string, eventId?: string): LogLine => ({
    at: new Date().toISOString(),
    stream: eventId ? 'log' : 'stderr',
    level: 'info',
    message,
    ...(eventId ? { eventId, fields: { step: message } } : {}),
  });

  it("answers each recipient's lines for the event, newest last, and says an HTTP plugin keeps none", async () => {
    events.set('e-1', record('e-1', [delivery(STDIO, 'stdio-jsonrpc'), delivery(HTTP, 'http')]));
    logs.append(STDIO, line('started', 'e-1'));
    logs.append(STDIO, line('printed on stderr'));
    logs.append(STDIO, line('of another event', 'e-2'));
    logs.append(STDIO, line('answered', 'e-1'));
    const res = await get('/api/events/e-1/logs');
    expect(res.status).toBe(200);
    const body = EventLogsResponseSchema.parse(res.body);
    expect(body.eventId).toBe('e-1');
    expect(body.plugins.map((p) => [p.pluginId, p.transport, p.kept, p.truncated])).toEqual([
      [STDIO, 'stdio-jsonrpc', true, false],
      [HTTP, 'http', false, false],
    ]);
    expect(body.plugins[0]!.lines).toEqual([
      expect.objectContaining({ stream: 'log', level: 'info', message: 'started', eventId: 'e-1', fields: { step: 'started' } }),
      expect.objectContaining({ message: 'answered', eventId: 'e-1' }),
    ]);
    expect(body.plugins[1]!.lines).toEqual([]);
  });

  it('keeps the newest lines up to the limit and says older ones were left out', async () => {
    events.set('e-1', record('e-1', [delivery(STDIO, 'stdio-jsonrpc')]));
    for (let i = 0; i < 5; i++) logs.append(STDIO, line(`step ${i}`, 'e-1'));
    const res = await get('/api/events/e-1/logs?limit=2');
    expect(res.status).toBe(200);
    expect(res.body.plugins[0].lines.map((l: LogLine) => l.message)).toEqual(['step 3', 'step 4']);
    expect(res.body.plugins[0].truncated).toBe(true);
    const all = await get('/api/events/e-1/logs?limit=5');
    expect(all.body.plugins[0]).toMatchObject({ truncated: false, lines: expect.any(Array) });
    expect(all.body.plugins[0].lines).toHaveLength(5);
  });

  it('refuses an event the log does not keep, a bad limit and a request without the admin token', async () => {
    const missing = await get('/api/events/no-such-event/logs');
    expect({ status: missing.status, code: missing.body.error?.code }).toEqual({ status: 404, code: 'EVENT_NOT_FOUND' });
    for (const limit of ['0', '1001', 'ten']) {
      const bad = await get(`/api/events/e-1/logs?limit=${limit}`);
      expect({ status: bad.status, code: bad.body.error?.code }).toEqual({ status: 400, code: 'BAD_REQUEST' });
    }
    const anonymous = await request(app).get('/api/events/e-1/logs');
    expect(anonymous.status).toBe(401);
  });
});
