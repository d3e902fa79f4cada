import { ReplayGuard } from './replay-guard';

describe('ReplayGuard', () => {
  it('refuses an id seen within the memory time and accepts it again after', () => {
    let now = 0;
    const guard = new ReplayGuard({ rememberMilliseconds: 1000, now: () => now });
    expect(guard.firstTime('a')).toBe(true);
    expect(guard.firstTime('a')).toBe(false);
    now = 1001;
    expect(guard.firstTime('a')).toBe(true);
  });

  it('stays within maxEntries, forgetting the oldest first', () => {
    const guard = new ReplayGuard({ maxEntries: 3, now: () => 0 });
    for (const id of ['a', 'b', 'c', 'd']) expect(guard.firstTime(id)).toBe(true);
    expect(guard.size).toBe(3);
    expect(guard.evicted).toBe(1);
    expect(guard.firstTime('d')).toBe(false);
    expect(guard.firstTime('a')).toBe(true);
  });
});
