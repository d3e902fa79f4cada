import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * One lock per plugin id for the whole host. Everything that checks a plugin's
 * record and then acts on it (install, update, uninstall, HTTP registration,
 * start and stop) runs inside `run(pluginId, ...)`, so an upload and an HTTP
 * registration of one id, or an update and a start, never interleave.
 *
 * The composition root makes one and hands the same one to every component.
 * Several hosts sharing a registry need a lock they share too (a PostgreSQL
 * advisory lock per pluginId fits this interface).
 */
export interface PluginLock {
  /**
   * Runs `work` once no other work holds `pluginId`, and holds it until `work`
   * settles. Re-entrant: work already holding `pluginId` that calls `run` for
   * it again runs at once instead of waiting for itself.
   */
  run<T>(pluginId: string, work: () => Promise<T>): Promise<T>;
}

interface Hold {
  key: string;
  active: boolean;
}

/** The in-process `PluginLock`: a queue of waiting work per key. */
export class KeyedLock implements PluginLock {
  private readonly tails = new Map<string, Promise<void>>();
  // The holds of the current async call chain, to let re-entry through.
  private readonly held = new AsyncLocalStorage<readonly Hold[]>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const holds = this.held.getStore() ?? [];
    // A hold that ended does not count: a task started inside the work and
    // still running after it must queue like anyone else.
    if (holds.some((h) => h.key === key && h.active)) return work();

    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.tails.set(key, tail);
    const hold: Hold = { key, active: false };
    const result = previous.then(() => {
      hold.active = true;
      return this.held.run([...holds, hold], work);
    });
    const done = () => {
      hold.active = false;
      // The last in the queue removes the key, so the map does not grow with every id ever seen.
      if (this.tails.get(key) === tail) this.tails.delete(key);
      // Nothing holds or waits for any key: the async context tracking goes off until the next run (it costs
      // every promise of the process, event traffic included, while on). Work that outlived its hold finds no
      // holds then, which is how it is treated anyway.
      if (this.tails.size === 0) this.held.disable();
      release();
    };
    result.then(done, done);
    return result;
  }
}
