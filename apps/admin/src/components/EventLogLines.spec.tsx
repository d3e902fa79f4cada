import { act, render } from '@testing-library/react';
import { chooseLanguage, ready } from '../i18n';
import { EventLogLines } from './EventLogLines';

beforeAll(() => ready);
afterEach(() =>
  act(async () => {
    await chooseLanguage('en');
  }),
);

const stdio = {
  pluginId: 'com.example.echo',
  transport: 'stdio-jsonrpc' as const,
  kept: true,
  truncated: false,
  lines: [
    {
      at: '2026-03-01T10:15:40.527Z',
      stream: 'log' as const,
      level: 'warn' as const,
      message: '<b>slow</b> upstream',
      fields: { ms: 950 },
      eventId: 'e-1',
    },
  ],
};

describe('EventLogLines', () => {
  it("shows each line's level, time, message and fields as text", () => {
    const { container } = render(<EventLogLines logs={stdio} loading={false} />);
    const line = container.querySelector('li.log-line.level-warn')!;
    expect(line.querySelector('time')!.getAttribute('datetime')).toBe('2026-03-01T10:15:40.527Z');
    expect(line.querySelector('.log-level')!.textContent).toBe('warn');
    // A plugin's text never becomes markup.
    expect(line.querySelector('.log-message')!.textContent).toBe('<b>slow</b> upstream');
    expect(line.querySelector('b')).toBeNull();
    expect(line.querySelector('.log-fields')!.textContent).toBe('{"ms":950}');
  });

  it('says when an HTTP plugin keeps no lines, when none names the event, and when older ones were left out', () => {
    const http = render(<EventLogLines logs={{ ...stdio, transport: 'http', kept: false, lines: [] }} loading={false} />);
    expect(http.container.textContent).toMatch(/HTTP plugin keeps its own logs/);
    const none = render(<EventLogLines logs={{ ...stdio, lines: [] }} loading={false} />);
    expect(none.container.textContent).toMatch(/No log line names this event/);
    const cut = render(<EventLogLines logs={{ ...stdio, truncated: true }} loading={false} />);
    expect(cut.container.textContent).toMatch(/Only the newest 1 lines/);
  });

  it('speaks Chinese when chosen', async () => {
    await act(async () => {
      await chooseLanguage('zh');
    });
    const http = render(<EventLogLines logs={{ ...stdio, transport: 'http', kept: false, lines: [] }} loading={false} />);
    expect(http.container.textContent).toMatch(/HTTP 插件的日志留在它自己的服务那边/);
  });
});
