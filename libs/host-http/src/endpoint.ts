import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import {
  answeredDelivery,
  chatEventOf,
  backoffDelay,
  SerialQueue,
  type BackoffPolicy,
  type Delivery,
  type DeliveryOutcome,
  type HttpPluginRecord,
  type OutboundSink,
  type PluginEndpoint,
  type PluginLogStore,
  type PluginRouting,
} from '@host/host-core';
import {
  Capability,
  HTTP_DEFAULTS,
  HTTP_HEADERS,
  HTTP_PATHS,
  LIMITS,
  PROTOCOL_VERSION,
  RUNTIME_DEFAULTS,
  type Concurrency,
  type HttpDeliveryErrorCode,
  type MessageEvent,
  type MessageResponse,
} from '@host/protocol';
import { DEFAULT_ADDRESS_POLICY } from './address-policy';
import { parseBaseUrl, type BaseUrl } from './base-url';
import { CircuitBreaker, DEFAULT_CIRCUIT_OPTIONS, type CircuitOptions } from './circuit-breaker';
import { DeliveryError, parseMessageResponse, toDeliveryError } from './delivery-error';
import { exchange } from './exchange';
import { HealthTracker, type HttpPluginHealth } from './health';
import type { HttpNetworkOptions } from './manifest-fetch';
import { deliverOutbound } from './outbound';
import { createPinnedConnector } from './pinned-connector';
import { signRequest } from './signing';
import { HttpTransportError } from './transport-error';

export interface HttpEndpointOptions extends HttpNetworkOptions {
  /** Retries after a safe failure; the default is HTTP_DEFAULTS.maxRetries (2). */
  maxRetries?: number;
  /** Waits before the retries. Default DEFAULT_RETRY_BACKOFF: 200 ms, then 800 ms, each less up to a fifth at random. */
  retryBackoff?: BackoffPolicy;
  circuit?: Partial<CircuitOptions>;
  /**
   * Events in flight to this plugin at once (also its connection count) and
   * how many more the dispatcher may queue. Default 32 and 1024: an HTTP
   * service handles concurrency itself, unlike a stdio process.
   */
  concurrency?: Partial<Concurrency>;
  /** Warnings (ignored interception, refused outbound messages) go here when given. */
  logs?: PluginLogStore;
  now?: () => number;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);
/**
 * Waits before the first and second retry: 200 ms, then 800 ms, less up to a
 * fifth at random, so the events in flight to a plugin that answered 503 at
 * once do not all come back at the same moment.
 */
export const DEFAULT_RETRY_BACKOFF: BackoffPolicy = { baseMilliseconds: 200, factor: 4, maxMilliseconds: 800, jitter: 0.2 };
// The handler deadline does not apply: an HTTP answer is decision and completion at once, bounded by the request timeout.
const DEFAULT_CONCURRENCY: Concurrency = {
  maxConcurrentEvents: 32,
  queueCapacity: 1024,
  overflowPolicy: 'reject',
  handlerDeadlineMilliseconds: RUNTIME_DEFAULTS.handlerDeadlineMilliseconds,
};
/** What the dispatcher waits beyond the plugin's own deadline (which includes retries). */
const DISPATCH_GRACE_MILLISECONDS = 1000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One registered HTTP plugin as the dispatcher sees it. Events are POSTed,
 * signed, over a keep-alive pool whose connections go only to addresses the
 * policy allowed. A delivery never takes longer than the plugin's request
 * timeout (retries included), so a slow or dead plugin delays nobody else
 * beyond that, and the circuit breaker stops even that once it is down.
 */
export class HttpPluginEndpoint implements PluginEndpoint {
  readonly transport = 'http' as const;
  private record: HttpPluginRecord;
  private readonly base: BaseUrl;
  private readonly pool: Pool;
  private readonly breaker: CircuitBreaker;
  private readonly healthTracker: HealthTracker;
  private readonly options: HttpEndpointOptions;
  private readonly now: () => number;
  private readonly concurrency: Concurrency;
  // Outbound messages go to the sink one after another, in event order, off
  // the delivery path: provider latency never delays the dispatcher.
  private readonly outbound = new SerialQueue();

  constructor(record: HttpPluginRecord, options: HttpEndpointOptions = {}) {
    this.record = record;
    this.options = options;
    this.now = options.now ?? Date.now;
    this.base = parseBaseUrl(record.baseUrl);
    this.concurrency = { ...DEFAULT_CONCURRENCY, ...options.concurrency };
    this.pool = new Pool(this.base.origin, {
      connections: this.concurrency.maxConcurrentEvents,
      // One request at a time per connection: a slow event never queues
      // behind another on the same socket.
      pipelining: 1,
      connect: createPinnedConnector({
        policy: options.policy ?? DEFAULT_ADDRESS_POLICY,
        resolver: options.resolver,
        connectTimeoutMilliseconds: options.connectTimeoutMilliseconds ?? HTTP_DEFAULTS.connectTimeoutMilliseconds,
        tls: options.tls,
      }),
    });
    this.breaker = new CircuitBreaker({ ...DEFAULT_CIRCUIT_OPTIONS, ...options.circuit }, this.now);
    this.healthTracker = new HealthTracker(this.breaker, this.now);
  }

  get pluginId(): string {
    return this.record.pluginId;
  }

  /** The record this endpoint delivers for (manifest as of the last refresh). */
  get current(): HttpPluginRecord {
    return this.record;
  }

  /** Takes a refreshed manifest or a new timeout; the base URL and secret stay. */
  update(record: HttpPluginRecord): void {
    if (record.pluginId !== this.record.pluginId || record.baseUrl !== this.record.baseUrl) {
      throw new Error('update() keeps pluginId and baseUrl; create a new endpoint for another service');
    }
    this.record = record;
  }

  routing(): PluginRouting {
    const m = this.record.manifest;
    return {
      pluginId: m.pluginId,
      eventSubscriptions: m.eventSubscriptions,
      commands: m.commands,
      permissions: m.permissions,
      concurrency: this.concurrency,
      requestTimeoutMilliseconds: this.requestTimeout() + DISPATCH_GRACE_MILLISECONDS,
      canIntercept: (m.capabilities & Capability.InterceptMessages) !== 0,
    };
  }

  isAvailable(): boolean {
    return this.breaker.canPass();
  }

  health(): HttpPluginHealth {
    return this.healthTracker.snapshot();
  }

  /**
   * An HTTP answer is the decision; the delivery completes once the messages
   * it carried went to the sink (each is recorded and sent there, which may
   * wait on the store), so the event's record holds them when it completes.
   */
  deliver(event: MessageEvent, sink: OutboundSink): Delivery {
    const sending: { done: Promise<void> } = { done: Promise.resolve() };
    const answered = answeredDelivery(this.exchangeEvent(event, sink, sending));
    return { ...answered, completion: answered.completion.then(async (c) => (await sending.done, c)) };
  }

  private async exchangeEvent(event: MessageEvent, sink: OutboundSink, sending: { done: Promise<void> }): Promise<DeliveryOutcome> {
    const started = performance.now();
    if (this.breaker.acquire() === 'reject') {
      const next = this.breaker.nextProbeAt;
      const error = new DeliveryError(
        'http.circuit_open',
        `Deliveries to ${this.pluginId} failed ${this.breaker.consecutiveFailures} times in a row; the next try is at ${next ? new Date(next).toISOString() : 'soon'}.`,
      );
      return this.outcome(false, false, { code: error.code, message: error.message }, started);
    }
    let response: MessageResponse;
    try {
      response = await this.post(event);
    } catch (e) {
      const error = toDeliveryError(e);
      this.breaker.recordFailure();
      this.healthTracker.failure(error.code, error.message);
      return this.outcome(false, false, { code: error.code, message: error.message }, started);
    }
    this.breaker.recordSuccess();
    this.healthTracker.success();
    const durationMs = performance.now() - started;

    let intercepted = response.intercepted;
    let notice: DeliveryOutcome['notice'];
    if (intercepted && !(this.record.manifest.capabilities & Capability.InterceptMessages)) {
      intercepted = false;
      notice = {
        code: 'http.intercept.not_allowed',
        message: `event ${event.eventId}: intercepted: true ignored without the InterceptMessages capability`,
      };
      this.warn(notice.code, notice.message);
    }
    if (response.outboundMessages.length > 0) {
      const capabilities = this.record.manifest.capabilities;
      sending.done = this.outbound
        .run(() =>
          deliverOutbound(this.pluginId, capabilities, event, response.outboundMessages, sink, (code, message) => this.warn(code, message)),
        )
        .catch(() => undefined);
    }
    return {
      pluginId: this.pluginId,
      accepted: response.accepted,
      intercepted,
      error: response.error ? { code: response.error.code, message: response.error.message } : null,
      ...(notice ? { notice } : {}),
      durationMs,
    };
  }

  /**
   * Health check without an event: a signed GET of the manifest through the
   * same pool, counted by the circuit breaker like a delivery. While the
   * circuit is open it runs only when a probe is due, so it is what brings an
   * idle plugin back to healthy after it recovers.
   */
  async checkHealth(): Promise<HttpPluginHealth> {
    if (this.breaker.acquire() === 'reject') return this.health();
    try {
      const res = await exchange(this.pool, {
        method: 'GET',
        path: `${this.base.basePath}${HTTP_PATHS.manifest}`,
        headers: {
          accept: 'application/json',
          [HTTP_HEADERS.pluginId]: this.pluginId,
          [HTTP_HEADERS.protocolVersion]: String(PROTOCOL_VERSION),
          ...signRequest(this.record.signingSecret, ''),
        },
        timeoutMilliseconds: this.requestTimeout(),
        maxResponseBytes: LIMITS.maxHttpManifestBytes,
      });
      if (res.status !== 200)
        throw new DeliveryError('http.status', `GET ${HTTP_PATHS.manifest} answered ${res.status}, expected 200.`, { status: res.status });
      this.breaker.recordSuccess();
      this.healthTracker.success();
    } catch (e) {
      const error = toDeliveryError(e);
      this.breaker.recordFailure();
      this.healthTracker.failure(error.code, error.message);
    }
    return this.health();
  }

  /** Resolves when every outbound message handed over so far has been passed to the sink. */
  async idle(): Promise<void> {
    await this.outbound.idle();
  }

  /** Closes the connection pool (in-flight deliveries fail), then lets queued outbound messages finish. */
  async close(): Promise<void> {
    await this.pool.destroy().catch(() => undefined);
    await this.idle();
  }

  private requestTimeout(): number {
    return this.record.requestTimeoutMilliseconds ?? HTTP_DEFAULTS.requestTimeoutMilliseconds;
  }

  /** POSTs the event with retries where safe, all inside the plugin's request timeout. */
  private async post(event: MessageEvent): Promise<MessageResponse> {
    // An event of another type than message.created goes out as the plugin gets it, to its own path.
    const chat = chatEventOf(event);
    const body = JSON.stringify(chat ?? event);
    const deliveryId = randomUUID();
    const deadline = performance.now() + this.requestTimeout();
    const maxRetries = this.options.maxRetries ?? HTTP_DEFAULTS.maxRetries;
    const backoff = this.options.retryBackoff ?? DEFAULT_RETRY_BACKOFF;
    const path = `${this.base.basePath}${chat ? HTTP_PATHS.otherEvents : HTTP_PATHS.messageEvents}`;
    for (let attempt = 0; ; attempt++) {
      const remaining = Math.ceil(deadline - performance.now());
      let retryable: DeliveryError | undefined;
      try {
        const res = await exchange(this.pool, {
          method: 'POST',
          path,
          headers: {
            'content-type': 'application/json',
            [HTTP_HEADERS.pluginId]: this.pluginId,
            [HTTP_HEADERS.protocolVersion]: String(PROTOCOL_VERSION),
            // Re-signed per attempt (fresh timestamp), same delivery id.
            ...signRequest(this.record.signingSecret, body, { deliveryId }),
          },
          body,
          timeoutMilliseconds: Math.max(1, remaining),
          maxResponseBytes: LIMITS.maxHttpResponseBytes,
        });
        if (!RETRYABLE_STATUS.has(res.status)) return parseMessageResponse(res);
        retryable = new DeliveryError(
          'http.status',
          `The plugin answered ${res.status} on ${attempt + 1} tries; expected 200 with a message response.`,
          {
            status: res.status,
            tries: attempt + 1,
          },
        );
      } catch (e) {
        // Only connection failures before the request was written are
        // repeated: a request the plugin may have received is never sent twice.
        if (e instanceof HttpTransportError && e.beforeRequestSent && (e.kind === 'unreachable' || e.kind === 'timeout'))
          retryable = toDeliveryError(e);
        else throw e;
      }
      const wait = backoffDelay(backoff, attempt);
      if (attempt >= maxRetries || performance.now() + wait >= deadline) {
        if (performance.now() + wait >= deadline && attempt < maxRetries) {
          retryable.details['stoppedBy'] = 'requestTimeout';
        }
        throw retryable;
      }
      await sleep(wait);
    }
  }

  private outcome(
    accepted: boolean,
    intercepted: boolean,
    error: { code: string; message: string } | null,
    started: number,
  ): DeliveryOutcome {
    return { pluginId: this.pluginId, accepted, intercepted, error, durationMs: performance.now() - started };
  }

  private warn(code: HttpDeliveryErrorCode | string, message: string): void {
    this.healthTracker.warning(code, message);
    this.options.logs?.append(this.pluginId, {
      at: new Date(this.now()).toISOString(),
      stream: 'host',
      level: 'warn',
      message: `${code}: ${message}`,
    });
  }
}
