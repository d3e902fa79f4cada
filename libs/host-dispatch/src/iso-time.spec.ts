import { IsoTimeCache } from './iso-time';

describe('IsoTimeCache', () => {
  it('formats each millisecond as toISOString does, repeated or not', () => {
    const cache = new IsoTimeCache();
    const times = [0, 1_700_000_000_123, 1_700_000_000_123, 1_700_000_000_124, 1_700_000_000_123, 253_402_300_799_999];
    expect(times.map((t) => cache.at(t))).toEqual(times.map((t) => new Date(t).toISOString()));
  });
});
