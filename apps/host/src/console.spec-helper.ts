import request from 'supertest';
import type { Host } from './compose';

/** A chat message from Ann in group g1 through the console API of `host`, as the admin token `token`. */
export const sayAs = (token: string) => (host: Host, text: string) =>
  request(host.app)
    .post('/api/console/messages')
    .set({ Authorization: `Bearer ${token}` })
    .send({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1', displayName: 'Ann' }, text });

/** Polls `read` until `done` holds or `ms` passed; answers the last value read. */
export async function within<T>(ms: number, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}
