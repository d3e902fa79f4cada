import { ReplyReferences } from './reply-references';
import { makeEvent } from './in-process.spec-helper';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');

function eventFor(eventId: string, windowMs?: number) {
  const e = makeEvent('/cmd', { eventId });
  if (windowMs !== undefined) e.messageReference.replyUntil = new Date(T0 + windowMs).toISOString();
  return e;
}

describe('ReplyReferences', () => {
  let now: number;
  beforeEach(() => {
    now = T0;
  });
  const make = (options: ConstructorParameters<typeof ReplyReferences>[0] = {}) => new ReplyReferences({ now: () => now, ...options });

  it('answers only plugins the event was handed to, with what the reply needs', () => {
    const refs = make();
    const event = eventFor('e1', 60_000);
    refs.allow(event, 'com.a.one');
    refs.allow(event, 'com.a.two');
    refs.allow(event, 'com.a.two');
    const found = refs.find('com.a.two', 'e1');
    expect(found).toMatchObject({
      status: 'open',
      reference: {
        eventId: 'e1',
        source: 'console',
        target: { type: 'group', id: 'group-1' },
        messageId: event.messageReference.messageId,
        sequence: 0,
        plugins: ['com.a.one', 'com.a.two'],
      },
    });
    expect(refs.find('com.a.three', 'e1')).toEqual({ status: 'unknown' });
    expect(refs.find('com.a.one', 'e2')).toEqual({ status: 'unknown' });
    expect(refs.size).toBe(1);
  });

  it('keeps a reference for its whole reply window however many events come after it', () => {
    const refs = make();
    refs.allow(eventFor('early', 5 * 60_000), 'com.a.one');
    for (let i = 0; i < 5000; i++) {
      now = T0 + i * 2; // 500 events/s
      refs.allow(eventFor(`e${i}`, 5 * 60_000 + i * 2), 'com.a.one');
    }
    now = T0 + 3300;
    expect(refs.find('com.a.one', 'early').status).toBe('open');
    expect(refs.evictedOpen).toBe(0);
  });

  it('says expired once the window closed, for a grace period, then forgets the reference', () => {
    const refs = make({ expiredGraceMilliseconds: 1000 });
    refs.allow(eventFor('e1', 10_000), 'com.a.one');
    now = T0 + 10_000;
    expect(refs.find('com.a.one', 'e1').status).toBe('open');
    now = T0 + 10_001;
    expect(refs.find('com.a.one', 'e1').status).toBe('expired');
    now = T0 + 11_001;
    expect(refs.find('com.a.one', 'e1').status).toBe('unknown');
    // Dropped from memory by the next reference kept.
    refs.allow(eventFor('e2', 60_000), 'com.a.one');
    expect(refs.size).toBe(1);
  });

  it('keeps a reference to an event that names no window for windowWithoutDeadlineMilliseconds, and never calls it expired', () => {
    const refs = make({ windowWithoutDeadlineMilliseconds: 5000, expiredGraceMilliseconds: 0 });
    refs.allow(eventFor('e1'), 'com.a.one');
    now = T0 + 5000;
    expect(refs.find('com.a.one', 'e1').status).toBe('open');
    now = T0 + 5001;
    expect(refs.find('com.a.one', 'e1').status).toBe('unknown');
  });

  it('stays within maxEntries by dropping the oldest references first, counting those still open', () => {
    const refs = make({ maxEntries: 3 });
    for (const id of ['a', 'b', 'c', 'd', 'e']) refs.allow(eventFor(id, 60_000), 'com.a.one');
    expect(refs.size).toBe(3);
    expect(['a', 'b', 'c', 'd', 'e'].map((id) => refs.find('com.a.one', id).status)).toEqual([
      'unknown',
      'unknown',
      'open',
      'open',
      'open',
    ]);
    expect(refs.evictedOpen).toBe(2);
  });

  it('stays within maxBytes, counting the strings it keeps', () => {
    const refs = make({ maxBytes: 4000 });
    const long = 'x'.repeat(500);
    for (let i = 0; i < 20; i++) {
      const e = eventFor(`e${i}`, 60_000);
      e.messageReference.messageId = `${long}${i}`;
      refs.allow(e, 'com.a.one');
      expect(refs.bytes).toBeLessThanOrEqual(4000);
    }
    // Each reference costs about 1.4 kB here: two fit.
    expect(refs.size).toBe(2);
    expect(refs.find('com.a.one', 'e19').status).toBe('open');
    expect(refs.find('com.a.one', 'e17').status).toBe('unknown');
  });

  it('starts a new reference when an event id comes again after its reference was dropped, and drops expired ones oldest first', () => {
    const refs = make({ expiredGraceMilliseconds: 0 });
    refs.allow(eventFor('a', 1000), 'com.a.one');
    refs.allow(eventFor('b', 2000), 'com.a.one');
    now = T0 + 1500;
    refs.allow(eventFor('c', 60_000), 'com.a.one');
    expect(refs.size).toBe(2);
    now = T0 + 2500;
    const again = eventFor('a', 70_000);
    refs.allow(again, 'com.a.two');
    expect(refs.find('com.a.one', 'a').status).toBe('unknown');
    expect(refs.find('com.a.two', 'a').status).toBe('open');
    expect(refs.size).toBe(2);
  });
});
