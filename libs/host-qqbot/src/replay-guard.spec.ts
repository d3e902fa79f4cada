import { MemoryReplayStore } from '@host/host-core';
import { ReplayGuard, replayKeys } from './replay-guard';

describe('ReplayGuard', () => {
  it('refuses a request seen within the memory time and accepts it again after', async () => {
    let now = 0;
    const guard = new ReplayGuard('qqbot:1', { rememberMilliseconds: 1000, now: () => now });
    expect(await guard.firstTime(['event:a'])).toBe(true);
    expect(await guard.firstTime(['event:a'])).toBe(false);
    now = 1001;
    expect(await guard.firstTime(['event:a'])).toBe(true);
  });

  it('keeps accounts apart in one store, and forgets on request', async () => {
    const store = new MemoryReplayStore();
    const one = new ReplayGuard('qqbot:1', { store });
    const two = new ReplayGuard('qqbot:2', { store });
    expect(await one.firstTime(['event:a', 'message:m'])).toBe(true);
    expect(await two.firstTime(['event:a', 'message:m'])).toBe(true);
    expect(await one.firstTime(['message:m'])).toBe(false);
    await one.forget(['event:a', 'message:m']);
    expect(await one.firstTime(['message:m'])).toBe(true);
  });
});

describe('replayKeys', () => {
  it('names a request by its event id and its message id, or by its signature when it has neither', () => {
    expect(replayKeys({ eventId: 'E1', messageId: 'M1', signature: 'AB' })).toEqual(['event:E1', 'message:M1']);
    expect(replayKeys({ eventId: null, messageId: 'M1', signature: 'AB' })).toEqual(['message:M1']);
    expect(replayKeys({ eventId: null, messageId: null, signature: 'AB' })).toEqual(['signature:ab']);
  });

  it('keeps a long or unprintable id as its SHA-256', () => {
    const [long, odd] = [replayKeys({ eventId: 'x'.repeat(201), messageId: 'a\nb', signature: 's' })].flat();
    expect(long).toMatch(/^event-sha256:[0-9a-f]{64}$/);
    expect(odd).toMatch(/^message-sha256:[0-9a-f]{64}$/);
  });
});

describe('how long a message is remembered', () => {
  it('recognises a message pushed again under a new event id throughout the C2C reply window (60 minutes)', async () => {
    let now = 1_000_000;
    const guard = new ReplayGuard('qqbot:2', { now: () => now });
    expect(await guard.firstTime(['event:e1', 'message:m1'])).toBe(true);
    now += 59 * 60_000;
    expect(await guard.firstTime(['event:e2', 'message:m1'])).toBe(false);
    now += 7 * 60_000;
    expect(await guard.firstTime(['event:e3', 'message:m1'])).toBe(true);
  });
});
