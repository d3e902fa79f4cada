import type { SqlDatabase } from './database';

/**
 * Gathers calls into batches: a call made while fewer than `parallel` batches
 * are on their way is sent at once (no wait at low load); calls made while they
 * all are wait for the next one, which takes them all (up to `max`) in one
 * statement. When a batch's statement fails, its calls are made one by one,
 * so a call the database refuses fails alone.
 */
export class Batcher<I, O> {
  /**
   * How many batches of one kind to keep on their way on `db`: the embedded
   * database runs one call at a time on its thread, so a second batch would
   * only wait there, holding calls the first could have taken; a server runs
   * two on two connections.
   */
  static parallelOn(db: SqlDatabase): number {
    return db.kind === 'embedded' ? 1 : 2;
  }

  private readonly waiting: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private running = 0;

  /** @param parallel how many batches may be on their way at once (a function: asked at each call, see {@link parallelOn}). */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly parallel: number | (() => number) = 2,
    private readonly max = 200,
  ) {}

  push(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    const parallel = typeof this.parallel === 'function' ? this.parallel() : this.parallel;
    while (this.running < parallel && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.max);
      this.running++;
      void (async () => {
        try {
          const out = await this.run(batch.map((b) => b.item));
          batch.forEach((b, i) => b.resolve(out[i]!));
        } catch (e) {
          // One call the database refuses fails only itself: the others of its batch are made again one by one.
          if (batch.length === 1) batch[0]!.reject(e);
          else
            for (const b of batch)
              await this.run([b.item]).then(
                (out) => b.resolve(out[0]!),
                (err: unknown) => b.reject(err),
              );
        } finally {
          this.running--;
          this.next();
        }
      })();
    }
  }
}
