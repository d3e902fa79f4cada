import { componentLog, formatLogLine, type HostLog, type LogFields, type LogLevel } from './host-log';

describe('host log lines', () => {
  const at = new Date('2026-01-02T03:04:05.678Z');

  it('are text for people by default, as before', () => {
    expect(formatLogLine('text', at, 'warn', 'something happened', { pluginId: 'p' })).toBe(
      '2026-01-02T03:04:05.678Z warn  something happened',
    );
  });

  it('are one JSON object each with the same fields in the same order, absent ones null', () => {
    const line = formatLogLine('json', at, 'error', 'a "quoted"\nmessage', {
      component: 'dispatch',
      pluginId: 'com.example.a',
      eventId: 'e-1',
    });
    expect(line).not.toContain('\n');
    expect(Object.keys(JSON.parse(line))).toEqual(['time', 'level', 'component', 'pluginId', 'eventId', 'message']);
    expect(JSON.parse(line)).toEqual({
      time: '2026-01-02T03:04:05.678Z',
      level: 'error',
      component: 'dispatch',
      pluginId: 'com.example.a',
      eventId: 'e-1',
      message: 'a "quoted"\nmessage',
    });
    expect(JSON.parse(formatLogLine('json', at, 'info', 'hello'))).toEqual({
      time: '2026-01-02T03:04:05.678Z',
      level: 'info',
      component: 'host',
      pluginId: null,
      eventId: null,
      message: 'hello',
    });
  });

  it('name their component when written through componentLog, fields of the line winning', () => {
    const lines: [LogLevel, string, LogFields | undefined][] = [];
    const log: HostLog = (level, message, fields) => lines.push([level, message, fields]);
    const installer = componentLog(log, 'installer');
    installer('info', 'installed');
    installer('warn', 'p failed', { pluginId: 'p' });
    expect(lines).toEqual([
      ['info', 'installed', { component: 'installer' }],
      ['warn', 'p failed', { component: 'installer', pluginId: 'p' }],
    ]);
  });
});
