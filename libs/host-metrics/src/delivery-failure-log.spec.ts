import { answeredDelivery, type PluginEndpoint } from '@host/host-core';
import { ConsoleProvider } from '@host/host-console';
import { Dispatcher } from '@host/host-dispatch';
import { DELIVERY_FAILURE_LINES_PER_WINDOW, DELIVERY_FAILURE_WINDOW_MILLISECONDS, logDeliveryFailures } from './delivery-failure-log';

function failing(pluginId: string): PluginEndpoint {
  return {
    pluginId,
    transport: 'http',
    routing: () => ({
      pluginId,
      eventSubscriptions: [{ eventType: 'message.created' }],
      canIntercept: false,
      permissions: [],
      commands: [],
    }),
    isAvailable: () => true,
    deliver: () =>
      answeredDelivery(
        Promise.resolve({
          pluginId,
          accepted: false,
          intercepted: false,
          error: { code: 'http.status', message: 'answered 500' },
          durationMs: 1,
        }),
      ),
  };
}

describe('logDeliveryFailures', () => {
  it('logs each failed delivery with its plugin and event id, a bounded number per plugin and window', async () => {
    let now = 1_000_000;
    const provider = new ConsoleProvider();
    const dispatcher = new Dispatcher({ endpoints: () => [failing('com.example.down')] });
    dispatcher.providers.register(provider);
    const lines: { message: string; pluginId: string; eventId?: string }[] = [];
    logDeliveryFailures(
      dispatcher.events,
      (message, fields) => lines.push({ message, ...fields }),
      () => now,
    );
    const say = () =>
      dispatcher.dispatch(provider.createEvent({ conversation: { type: 'group', id: 'g' }, sender: { id: 'u' }, text: 'hi' }));

    const first = await say();
    expect(lines).toEqual([
      {
        message: `com.example.down failed event ${first.eventId}: http.status: answered 500`,
        pluginId: 'com.example.down',
        eventId: first.eventId,
      },
    ]);
    for (let i = 0; i < DELIVERY_FAILURE_LINES_PER_WINDOW + 4; i++) await say();
    expect(lines).toHaveLength(DELIVERY_FAILURE_LINES_PER_WINDOW);

    now += DELIVERY_FAILURE_WINDOW_MILLISECONDS;
    const later = await say();
    expect(lines.slice(DELIVERY_FAILURE_LINES_PER_WINDOW)).toEqual([
      {
        message: 'com.example.down: 5 more failed deliveries were not logged one by one (see the event log)',
        pluginId: 'com.example.down',
      },
      expect.objectContaining({ eventId: later.eventId }),
    ]);
  });
});
