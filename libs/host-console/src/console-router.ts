import { json, Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { HostError, invalidRequest } from '@host/host-core';
import type { DeliveryRecord, Dispatcher, EventLogUpdate, EventRecord } from '@host/host-dispatch';
import { MENTION_ID_PATTERN } from '@host/messages';
import { NonBlankString, toValidationIssues } from '@host/protocol';
import type { ConsoleProvider } from './console-provider';
import { SseStream } from './sse-stream';

export interface ConsoleRouterOptions {
  dispatcher: Pick<Dispatcher, 'dispatch' | 'whenCompleted' | 'events'>;
  provider: ConsoleProvider;
  /** Longest `waitMs` a request may ask for, and longest wait for handlers to complete. */
  maxWaitMilliseconds?: number;
  /** Interval of SSE keep-alive comments. */
  heartbeatMilliseconds?: number;
  /** Bytes an SSE client may leave unread before it is disconnected (default: DEFAULT_SSE_MAX_BUFFERED_BYTES). */
  maxStreamBufferedBytes?: number;
}

const MAX_TEXT_CHARS = 4000;

export const ConsoleMessageRequestSchema = z.strictObject({
  conversation: z.strictObject({
    type: z.enum(['group', 'c2c']),
    id: NonBlankString.max(128),
  }),
  sender: z.strictObject({
    id: z.string().regex(MENTION_ID_PATTERN, { message: 'must be 1 to 128 letters, digits or _ . : @ -' }),
    displayName: z.string().max(64).optional(),
  }),
  text: z.string().max(MAX_TEXT_CHARS),
  waitMs: z.number().int().min(0).optional(),
});
export type ConsoleMessageRequest = z.infer<typeof ConsoleMessageRequestSchema>;

/** The answer to POST /console/messages. */
export interface ConsoleMessageResponse {
  eventId: string;
  /** False when a handler was still running when the answer was sent (see `maxWaitMilliseconds`). */
  completed: boolean;
  deliveries: Pick<DeliveryRecord, 'pluginId' | 'state' | 'accepted' | 'intercepted' | 'error' | 'completion'>[];
  outbound: { pluginId: string; target: { type: string; id: string }; body: unknown }[];
  /** Messages the host refused (rendering or permission), with the code the plugin got. */
  refused: { pluginId: string; target: { type: string; id: string }; error: { code: string; message: string } }[];
}

export function toConsoleResponse(record: EventRecord): ConsoleMessageResponse {
  return {
    eventId: record.eventId,
    completed: record.completedAt !== null,
    deliveries: record.deliveries.map((d) => ({
      pluginId: d.pluginId,
      state: d.state,
      accepted: d.accepted,
      intercepted: d.intercepted,
      error: d.error,
      completion: d.completion,
    })),
    outbound: record.outbound.filter((o) => !o.error).map((o) => ({ pluginId: o.pluginId, target: o.target, body: o.body })),
    refused: record.outbound.flatMap((o) => (o.error ? [{ pluginId: o.pluginId, target: o.target, error: o.error }] : [])),
  };
}

/** A record as streamed and listed: everything but the provider's raw payload. */
export function summarize(record: EventRecord): Omit<EventRecord, 'event'> & { event: Omit<EventRecord['event'], 'rawPayload'> } {
  const { rawPayload: _raw, ...event } = record.event;
  return { ...record, event };
}

function sendError(res: Response, e: HostError): void {
  res.status(e.status).json({ error: e.toJSON() });
}

/**
 * Routes of the console provider, to mount under /api behind admin auth:
 * - POST /console/messages: send a message as a console user; answers when
 *   every chosen plugin's handler completed or failed (at most
 *   `maxWaitMilliseconds`), after collecting replies for `waitMs` more when given.
 * - GET /console/events: Server-Sent Events of the event log (`?history=N`
 *   first replays the N newest records).
 * - GET /events: recent event records as JSON (`?pluginId=`, `?limit=`).
 */
export function createConsoleRouter(o: ConsoleRouterOptions): Router {
  const router = Router();
  const maxWait = o.maxWaitMilliseconds ?? 30_000;
  const heartbeat = o.heartbeatMilliseconds ?? 15_000;

  router.post('/console/messages', json({ limit: '64kb' }), async (req: Request, res: Response) => {
    const parsed = ConsoleMessageRequestSchema.safeParse(req.body);
    if (!parsed.success) {
      const issues = toValidationIssues(parsed.error, 'console');
      return sendError(res, invalidRequest('console message', issues));
    }
    const input = parsed.data;
    if (input.waitMs !== undefined && input.waitMs > maxWait) {
      return sendError(res, invalidRequest('console message', [{ code: 'console.field.invalid', path: 'waitMs', message: `"waitMs" must be at most ${maxWait}.` }]));
    }
    const record = await o.dispatcher.dispatch(o.provider.createEvent(input));
    if (record.completedAt === null) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([o.dispatcher.whenCompleted(record.eventId), new Promise((r) => (timer = setTimeout(r, maxWait)))]);
      clearTimeout(timer);
    }
    if (input.waitMs) await new Promise((r) => setTimeout(r, input.waitMs));
    res.json(toConsoleResponse(record));
  });

  router.get('/console/events', (req: Request, res: Response) => {
    const history = Math.min(Number(req.query['history'] ?? 0) || 0, o.dispatcher.events.capacity);
    const stream = new SseStream(res, { heartbeatMilliseconds: heartbeat, maxBufferedBytes: o.maxStreamBufferedBytes });
    const write = (update: EventLogUpdate) => {
      const data = update.type === 'send' ? { type: 'send', outbound: update.outbound } : { type: update.type, record: summarize(update.record) };
      stream.send(update.type, data);
    };
    for (const record of o.dispatcher.events.list({ limit: history }).reverse()) write({ type: 'event', record });
    const abort = new AbortController();
    stream.onClose(() => abort.abort());
    void (async () => {
      for await (const update of o.dispatcher.events.stream({ signal: abort.signal })) write(update);
    })();
  });

  router.get('/events', (req: Request, res: Response) => {
    const limit = Math.min(Math.max(Number(req.query['limit'] ?? 100) || 100, 1), o.dispatcher.events.capacity);
    const pluginId = typeof req.query['pluginId'] === 'string' ? req.query['pluginId'] : undefined;
    res.json({ events: o.dispatcher.events.list({ limit, ...(pluginId ? { pluginId } : {}) }).map(summarize) });
  });

  return router;
}
