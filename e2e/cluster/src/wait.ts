export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Reads `read` every 100 ms until `done` holds of what it answers or `ms` have passed, and answers the last
 * value (an error `read` threw counts as its value, so a replica that does not answer yet is read again).
 */
export async function until<T>(ms: number, read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read().catch((e: Error) => e as unknown as T);
    if (done(v) || Date.now() > deadline) return v;
    await sleep(100);
  }
}
