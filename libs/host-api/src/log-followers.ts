import type { LogLine, PluginLogStore } from '@host/host-core';

export const DEFAULT_MAX_LOG_FOLLOWERS = 32;

type Listener = (line: LogLine) => void;

/**
 * A plugin log store whose new lines can be followed as they are written
 * (the admin app's live log). It wraps the store every writer uses, so each
 * line reaches the followers of its plugin as it is appended. At most
 * `maxFollowers` follow at once; one more ends the oldest (its `onEvicted`).
 */
export class FollowableLogStore implements PluginLogStore {
  private readonly followers: { pluginId: string; listener: Listener; onEvicted: () => void }[] = [];

  constructor(
    private readonly inner: PluginLogStore,
    private readonly maxFollowers = DEFAULT_MAX_LOG_FOLLOWERS,
  ) {}

  append(pluginId: string, line: LogLine): void {
    this.inner.append(pluginId, line);
    for (const f of this.followers) if (f.pluginId === pluginId) f.listener(line);
  }

  tail(pluginId: string, lines: number): Promise<LogLine[]> {
    return this.inner.tail(pluginId, lines);
  }

  async linesOfEvent(pluginId: string, eventId: string, max: number): Promise<LogLine[]> {
    return this.inner.linesOfEvent ? this.inner.linesOfEvent(pluginId, eventId, max) : [];
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  get followerCount(): number {
    return this.followers.length;
  }

  /** Calls `listener` with each new line of `pluginId` until the returned function is called. */
  follow(pluginId: string, listener: Listener, onEvicted: () => void): () => void {
    const entry = { pluginId, listener, onEvicted };
    this.followers.push(entry);
    while (this.followers.length > this.maxFollowers) this.followers.shift()!.onEvicted();
    return () => {
      const i = this.followers.indexOf(entry);
      if (i >= 0) this.followers.splice(i, 1);
    };
  }
}
