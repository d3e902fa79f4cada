/**
 * The file_info of uploaded files, kept while the platform says it is valid (rich-media.md of
 * tencent-connect/bot-docs: `ttl` seconds, 0 for no end; a file_info uploaded for groups serves every group
 * of the account, one for users every user), so an image sent again is not fetched and uploaded again.
 * Bounded: the oldest entry goes when `maxEntries` are kept. Concurrent sends of one file share one upload.
 */
export class MediaCache {
  private readonly entries = new Map<string, { fileInfo: string; until: number }>();
  private readonly pending = new Map<string, Promise<string>>();
  /** Uploads made (for tests and the admin view). */
  uploads = 0;

  constructor(
    private readonly o: {
      maxEntries?: number;
      /** How long a file_info without an end (ttl 0) is kept (default 24 h). */
      maxKeepMilliseconds?: number;
      /** Taken off the platform's ttl, so a file_info is not used at the last moment (default 60 s). */
      marginMilliseconds?: number;
      now?: () => number;
    } = {},
  ) {}

  get size(): number {
    return this.entries.size;
  }

  async fileInfo(
    accountId: string,
    scope: 'group' | 'user',
    url: string,
    upload: () => Promise<{ fileInfo: string; ttlSeconds: number }>,
  ): Promise<string> {
    const key = JSON.stringify([accountId, scope, url]);
    const now = (this.o.now ?? Date.now)();
    const kept = this.entries.get(key);
    if (kept && kept.until > now) return kept.fileInfo;
    if (kept) this.entries.delete(key);
    const waiting = this.pending.get(key);
    if (waiting) return waiting;
    const started = (async () => {
      this.uploads++;
      const { fileInfo, ttlSeconds } = await upload();
      const keep =
        ttlSeconds > 0 ? ttlSeconds * 1000 - (this.o.marginMilliseconds ?? 60_000) : (this.o.maxKeepMilliseconds ?? 24 * 3_600_000);
      if (keep > 0) {
        this.entries.set(key, { fileInfo, until: (this.o.now ?? Date.now)() + keep });
        const max = this.o.maxEntries ?? 1_000;
        while (this.entries.size > max) this.entries.delete(this.entries.keys().next().value as string);
      }
      return fileInfo;
    })().finally(() => this.pending.delete(key));
    this.pending.set(key, started);
    return started;
  }
}
