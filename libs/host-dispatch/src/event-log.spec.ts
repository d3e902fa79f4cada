import { EventLog, type EventRecord } from './event-log';

function record(eventId: string): EventRecord {
  return {
    eventId,
    source: 'console',
    receivedAt: '2026-01-01T00:00:00.000Z',
    routedAt: null,
    completedAt: null,
    event: {} as EventRecord['event'],
    recipients: [],
    deliveries: [],
    outbound: [],
    interceptedBy: null,
    replySequence: 0,
  };
}

const ids = (log: EventLog) => log.list({ limit: 10_000 }).map((r) => r.eventId);

describe('EventLog', () => {
  it('forgets the oldest events beyond its capacity, over many rounds', () => {
    const log = new EventLog({ capacity: 3 });
    for (let i = 0; i < 20; i++) log.add(record(`e${i}`));
    expect(ids(log)).toEqual(['e19', 'e18', 'e17']);
    expect(log.get('e16')).toBeUndefined();
    expect(log.get('e17')?.eventId).toBe('e17');
  });

  it('gives an event added again the newest place, so it is forgotten last', () => {
    const log = new EventLog({ capacity: 3 });
    ['a', 'b', 'c'].forEach((id) => log.add(record(id)));
    const again = record('a');
    log.add(again);
    expect(ids(log)).toEqual(['a', 'c', 'b']);
    log.add(record('d'));
    expect(ids(log)).toEqual(['d', 'a', 'c']);
    expect(log.get('a')).toBe(again);
    log.add(record('e'));
    log.add(record('f'));
    expect(ids(log)).toEqual(['f', 'e', 'd']);
  });
});
