/** Seconds one bucket of the dashboard's series covers. */
export const STATS_BUCKET_SECONDS = 10;
/** Buckets kept: an hour of 10 s buckets. */
export const STATS_BUCKET_COUNT = 360;
/** Latency samples kept per bucket; past it, reservoir sampling keeps a uniform sample of all seen. */
export const STATS_RESERVOIR_SIZE = 128;
/** The window of each plugin's error rate and recent outcomes. */
export const STATS_PLUGIN_WINDOW_SECONDS = 300;

/** Final outcomes of a delivery, as the event log names them. */
export const STATS_OUTCOMES = ['completed', 'declined', 'failed', 'expired'] as const;
export type StatsOutcome = (typeof STATS_OUTCOMES)[number];

const BUCKET_MS = STATS_BUCKET_SECONDS * 1000;
const PLUGIN_BUCKETS = STATS_PLUGIN_WINDOW_SECONDS / STATS_BUCKET_SECONDS;

/** One 10 s bucket of the series. Latencies are end to end (received until every delivery was final). */
export interface StatsBucketView {
  /** Start of the bucket, ISO 8601. */
  at: string;
  eventsIn: number;
  completed: number;
  declined: number;
  failed: number;
  expired: number;
  /** null when no event completed in the bucket. */
  p50Milliseconds: number | null;
  p99Milliseconds: number | null;
}

/** One plugin's deliveries over the last STATS_PLUGIN_WINDOW_SECONDS, and its last failure since the start. */
export interface PluginRecentView {
  deliveries: number;
  failed: number;
  expired: number;
  lastError: { code: string; message: string; at: string } | null;
}

interface Bucket {
  /** Index of the bucket since the epoch (start / BUCKET_MS); -1 while unused. */
  index: number;
  eventsIn: number;
  outcomes: Record<StatsOutcome, number>;
  samples: Float64Array;
  seen: number;
}

interface PluginBucket {
  index: number;
  deliveries: number;
  failed: number;
  expired: number;
}

interface PluginSlot {
  buckets: PluginBucket[];
  lastError: PluginRecentView['lastError'];
}

function emptyBucket(): Bucket {
  return {
    index: -1,
    eventsIn: 0,
    outcomes: { completed: 0, declined: 0, failed: 0, expired: 0 },
    samples: new Float64Array(STATS_RESERVOIR_SIZE),
    seen: 0,
  };
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
function quantile(sorted: Float64Array, q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

/**
 * The dashboard's series: a ring of STATS_BUCKET_COUNT buckets of STATS_BUCKET_SECONDS each, with events
 * in, deliveries by final outcome and a bounded reservoir of end-to-end latencies per bucket, and per
 * plugin a 5 min ring of outcomes with its last failure. Memory is bounded by the ring and by the plugins
 * seen since the start; no sample is kept past its bucket.
 */
export class StatsRing {
  private readonly ring: Bucket[] = Array.from({ length: STATS_BUCKET_COUNT }, emptyBucket);
  private readonly plugins = new Map<string, PluginSlot>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  private bucket(at: number): Bucket {
    const index = Math.floor(at / BUCKET_MS);
    const b = this.ring[index % STATS_BUCKET_COUNT]!;
    if (b.index !== index) {
      b.index = index;
      b.eventsIn = 0;
      for (const o of STATS_OUTCOMES) b.outcomes[o] = 0;
      b.seen = 0;
    }
    return b;
  }

  private pluginBucket(pluginId: string, at: number): { slot: PluginSlot; bucket: PluginBucket } {
    let slot = this.plugins.get(pluginId);
    if (!slot) {
      slot = {
        buckets: Array.from({ length: PLUGIN_BUCKETS }, () => ({ index: -1, deliveries: 0, failed: 0, expired: 0 })),
        lastError: null,
      };
      this.plugins.set(pluginId, slot);
    }
    const index = Math.floor(at / BUCKET_MS);
    const bucket = slot.buckets[index % PLUGIN_BUCKETS]!;
    if (bucket.index !== index) Object.assign(bucket, { index, deliveries: 0, failed: 0, expired: 0 });
    return { slot, bucket };
  }

  /** An event was accepted and routed. */
  eventReceived(): void {
    this.bucket(this.now()).eventsIn++;
  }

  /** A delivery reached its final state; `error` is the failure standing for a failed or expired one. */
  deliveryFinal(pluginId: string, outcome: StatsOutcome, error: { code: string; message: string } | null): void {
    const at = this.now();
    this.bucket(at).outcomes[outcome]++;
    const { slot, bucket } = this.pluginBucket(pluginId, at);
    bucket.deliveries++;
    if (outcome === 'failed') bucket.failed++;
    if (outcome === 'expired') bucket.expired++;
    if ((outcome === 'failed' || outcome === 'expired') && error)
      slot.lastError = { code: error.code, message: error.message, at: new Date(at).toISOString() };
  }

  /** An event's deliveries were all final, `milliseconds` after it was received. */
  eventCompleted(milliseconds: number): void {
    const b = this.bucket(this.now());
    const seen = b.seen++;
    if (seen < STATS_RESERVOIR_SIZE) b.samples[seen] = milliseconds;
    else {
      // Algorithm R: the new sample replaces a kept one with probability size/seen, so every sample is equally likely kept.
      const j = Math.floor(this.random() * (seen + 1));
      if (j < STATS_RESERVOIR_SIZE) b.samples[j] = milliseconds;
    }
  }

  /** The last hour, oldest bucket first, the current (partial) bucket last: always STATS_BUCKET_COUNT buckets. */
  series(): StatsBucketView[] {
    const current = Math.floor(this.now() / BUCKET_MS);
    const out: StatsBucketView[] = [];
    for (let index = current - STATS_BUCKET_COUNT + 1; index <= current; index++) {
      const b = this.ring[index % STATS_BUCKET_COUNT]!;
      const at = new Date(index * BUCKET_MS).toISOString();
      if (b.index !== index) {
        out.push({ at, eventsIn: 0, completed: 0, declined: 0, failed: 0, expired: 0, p50Milliseconds: null, p99Milliseconds: null });
        continue;
      }
      const kept = b.samples.slice(0, Math.min(b.seen, STATS_RESERVOIR_SIZE)).sort();
      out.push({
        at,
        eventsIn: b.eventsIn,
        ...b.outcomes,
        p50Milliseconds: kept.length ? quantile(kept, 0.5) : null,
        p99Milliseconds: kept.length ? quantile(kept, 0.99) : null,
      });
    }
    return out;
  }

  /** Each plugin's outcomes over the last 5 min (the current bucket included) and its last failure. */
  plugin(pluginId: string): PluginRecentView {
    const slot = this.plugins.get(pluginId);
    const view: PluginRecentView = { deliveries: 0, failed: 0, expired: 0, lastError: slot?.lastError ?? null };
    if (!slot) return view;
    const oldest = Math.floor(this.now() / BUCKET_MS) - PLUGIN_BUCKETS + 1;
    for (const b of slot.buckets) {
      if (b.index < oldest) continue;
      view.deliveries += b.deliveries;
      view.failed += b.failed;
      view.expired += b.expired;
    }
    return view;
  }
}
