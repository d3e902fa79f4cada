import { DEFAULT_EVENT_LOG_CAPACITY, type EventLogQuery, type EventLogStore, type EventRecord } from '@host/host-core';

export interface EventLogStoreOptions {
  /** Events kept (default 1000); older ones are forgotten. */
  capacity?: number;
}

/**
 * The event log in memory: the newest `capacity` records, gone when the host
 * stops. The file store keeps its window in one of these.
 */
export class MemoryEventLogStore implements EventLogStore {
  readonly capacity: number;
  private readonly records = new Map<string, EventRecord>();
  /**
   * Records in the order they were appended, oldest from `head`: finding the
   * oldest through the Map's iterator walks over every deleted entry the Map
   * keeps until it rehashes, which under load cost more than the rest of append().
   */
  private order: EventRecord[] = [];
  private head = 0;

  constructor(options: EventLogStoreOptions = {}) {
    this.capacity = Math.max(1, Math.floor(options.capacity ?? DEFAULT_EVENT_LOG_CAPACITY));
  }

  /** Keeps `record` as the newest; returns the record it forgot to make room, if any. */
  append(record: EventRecord): EventRecord | undefined {
    if (this.records.delete(record.eventId)) {
      // Rare (event ids are unique per source): the same id again takes the newest place.
      this.order = this.order.slice(this.head).filter((r) => r.eventId !== record.eventId);
      this.head = 0;
    }
    this.records.set(record.eventId, record);
    this.order.push(record);
    let forgotten: EventRecord | undefined;
    if (this.records.size > this.capacity) {
      forgotten = this.order[this.head++]!;
      this.records.delete(forgotten.eventId);
    }
    if (this.head >= this.capacity) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
    return forgotten;
  }

  /** Nothing to do: the kept object is the changed one. */
  update(_record: EventRecord): void {}

  get(eventId: string): EventRecord | undefined {
    return this.records.get(eventId);
  }

  /** Whether `record` itself (not only its id) is kept. */
  keeps(record: EventRecord): boolean {
    return this.records.get(record.eventId) === record;
  }

  list(query: EventLogQuery = {}): EventRecord[] {
    const limit = query.limit ?? 100;
    const out: EventRecord[] = [];
    for (let i = this.order.length - 1; i >= this.head && out.length < limit; i--) {
      const r = this.order[i]!;
      if (!query.pluginId || r.recipients.includes(query.pluginId)) out.push(r);
    }
    return out;
  }

  /** Every kept record, oldest first. */
  all(): EventRecord[] {
    return this.order.slice(this.head);
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}
}
