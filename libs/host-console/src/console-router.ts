import {
  ADMIN_ROUTES,
  ConsoleMessageRequestSchema,
  type ConsoleMessageRequest,
  type ConsoleMessageResponse,
  type EventListResponse,
  type RouteContract,
} from '@host/admin-api';
import { chatEventOf, invalidRequest, requireStore, type EventLogQuery, type StoreAvailability } from '@host/host-core';
import { errorHandler, implementRoute, jsonBody, mountRoutes, type RouteDef, type RouteHandler } from '@host/host-routes';
import type { EventLogUpdate, EventRecord, Dispatcher } from '@host/host-dispatch';
import { EVENT_JSON_SHAPE_LIMITS, type MessageEvent } from '@host/protocol';
import { Router, type RequestHandler } from 'express';
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
  /** The store's database: while it cannot be reached, a message is refused (STORE_UNAVAILABLE) instead of taken unrecorded. */
  store?: StoreAvailability;
  /**
   * The event log of every host sharing the store, newest first (replicas on one PostgreSQL server): GET /events
   * answers from it, so every replica shows the same events. Without it, this host's own log.
   */
  sharedEvents?: (query: EventLogQuery) => Promise<EventRecord[]>;
}

// The request and response shapes are part of the admin API's contract.
export { ConsoleMessageRequestSchema, type ConsoleMessageRequest, type ConsoleMessageResponse };

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
    outbound: record.outbound
      .filter((o) => !o.error)
      .map((o) => ({
        pluginId: o.pluginId,
        target: o.target,
        body: o.body,
        ...(o.messageId !== undefined ? { messageId: o.messageId } : {}),
      })),
    refused: record.outbound.flatMap((o) => (o.error ? [{ pluginId: o.pluginId, target: o.target, error: o.error }] : [])),
  };
}

/** A record as streamed and listed: everything but the provider's raw payload. */
export function summarize(record: EventRecord): Omit<EventRecord, 'event'> & { event: Omit<EventRecord['event'], 'rawPayload'> } {
  const { rawPayload: _raw, ...event } = record.event;
  // An event of another type keeps the plugin's copy beside the message-shaped one; its raw payload goes too.
  const chat = chatEventOf(record.event);
  if (chat) {
    const { rawPayload: _chatRaw, ...kept } = chat;
    return { ...record, event: { ...event, chatEvent: kept } as typeof event };
  }
  return { ...record, event };
}

/**
 * Routes of the console provider, to mount under /api behind admin auth, each
 * implementing its contract from @host/admin-api:
 * - POST /console/messages: send a message as a console user; answers when
 *   every chosen plugin's handler completed or failed (at most
 *   `maxWaitMilliseconds`), after collecting replies for `waitMs` more when given.
 * - POST /console/chat-events: the same for a button click or a bot or
 *   conversation event (interaction.created, bot.added, bot.removed,
 *   conversation.opened), delivered to the plugins subscribed to its type.
 * - GET /console/events: Server-Sent Events of the event log (`?history=N`
 *   first replays the N newest records).
 * - GET /events: recent event records as JSON (`?pluginId=`, `?limit=`).
 */
export function consoleRoutes(o: ConsoleRouterOptions): RouteDef[] {
  const routes: RouteDef[] = [];
  const route = <B, Q>(contract: RouteContract<B, Q>, handler: RouteHandler<B, Q>, before?: RequestHandler[]) =>
    routes.push(implementRoute(contract, handler, { before }));
  const maxWait = o.maxWaitMilliseconds ?? 30_000;
  const heartbeat = o.heartbeatMilliseconds ?? 15_000;

  /** Dispatches `event` and answers when every chosen plugin completed or failed (at most maxWait), then after `waitMs`. */
  const deliver = async (what: string, waitMs: number | undefined, create: () => MessageEvent) => {
    if (waitMs !== undefined && waitMs > maxWait) {
      throw invalidRequest(what, [{ code: 'console.field.invalid', path: 'waitMs', message: `"waitMs" must be at most ${maxWait}.` }]);
    }
    await requireStore(o.store);
    const event = create();
    // Refused before anything is recorded when the host cannot take it now (EVENTS_OVERLOADED, 503); else the
    // record is in the event log at once, while its deliveries may wait for busy or starting plugins.
    const routed = o.dispatcher.dispatch(event);
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      routed.then((r) => (r.completedAt === null ? o.dispatcher.whenCompleted(r.eventId) : r)).then(() => true),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), maxWait))),
    ]);
    clearTimeout(timer);
    const record = done ? await routed : (o.dispatcher.events.get(event.eventId) ?? (await routed));
    if (waitMs) await new Promise((r) => setTimeout(r, waitMs));
    return { body: toConsoleResponse(o.dispatcher.events.get(event.eventId) ?? record) };
  };
  route(
    ADMIN_ROUTES.sendConsoleMessage,
    ({ body: input }) => deliver('console message', input.waitMs, () => o.provider.createEvent(input)),
    [jsonBody({ limit: '64kb', shape: EVENT_JSON_SHAPE_LIMITS })],
  );
  route(
    ADMIN_ROUTES.sendConsoleChatEvent,
    ({ body: input }) => deliver('console chat event', input.waitMs, () => o.provider.createChatEvent(input)),
    [jsonBody({ limit: '16kb', shape: EVENT_JSON_SHAPE_LIMITS })],
  );

  route(ADMIN_ROUTES.consoleEvents, async ({ res, query }) => {
    const history = Math.min(query.history, o.dispatcher.events.capacity);
    const stream = new SseStream(res, { heartbeatMilliseconds: heartbeat, maxBufferedBytes: o.maxStreamBufferedBytes });
    const write = (update: EventLogUpdate) => {
      const data =
        update.type === 'send' ? { type: 'send', outbound: update.outbound } : { type: update.type, record: summarize(update.record) };
      stream.send(update.type, data);
    };
    for (const record of o.dispatcher.events.list({ limit: history }).reverse()) write({ type: 'event', record });
    const abort = new AbortController();
    stream.onClose(() => abort.abort());
    void (async () => {
      for await (const update of o.dispatcher.events.stream({ signal: abort.signal })) write(update);
    })();
  });

  route(ADMIN_ROUTES.listEvents, async ({ query }) => {
    const limit = Math.min(query.limit, o.dispatcher.events.capacity);
    const q = { limit, ...(query.pluginId ? { pluginId: query.pluginId } : {}) };
    const records = o.sharedEvents ? await o.sharedEvents(q) : o.dispatcher.events.list(q);
    const body: EventListResponse = { events: records.map(summarize) };
    return { body };
  });

  return routes;
}

/**
 * The console routes as a router of their own, answering failures as the
 * admin API does (for hosts and tests that do not use `createApp`).
 */
export function createConsoleRouter(o: ConsoleRouterOptions): Router {
  const router = Router();
  mountRoutes(router, consoleRoutes(o));
  router.use(errorHandler({}));
  return router;
}
