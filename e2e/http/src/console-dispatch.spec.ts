// The "done when", below the admin app: a console message goes
// through the real dispatcher to the bare HTTP plugin process, and its reply
// comes back rendered for the provider; stopping the plugin shows it
// unreachable, starting it again brings it back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleProvider } from '@host/host-console';
import { Dispatcher, ProviderRegistry } from '@host/host-dispatch';
import { HttpPluginRegistry } from '@host/host-http';
import { JsonRegistryStore } from '@host/host-store';
import { startBarePlugin, type BarePlugin } from './bare-plugin';

let dir: string;
let store: JsonRegistryStore;
let registry: HttpPluginRegistry;
let plugin: BarePlugin;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-http-console-'));
  store = await JsonRegistryStore.open(join(dir, 'state'));
  registry = new HttpPluginRegistry({
    store,
    retryBackoff: { baseMilliseconds: 20, factor: 1, maxMilliseconds: 20 },
    circuit: { openMilliseconds: 300 },
  });
  plugin = await startBarePlugin();
});

afterEach(async () => {
  await registry.close();
  await plugin.dispose();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('delivers a console message to the HTTP plugin and renders its reply; reports an outage and the recovery', async () => {
  const providers = new ProviderRegistry();
  const consoleProvider = new ConsoleProvider();
  providers.register(consoleProvider);
  const dispatcher = new Dispatcher({ endpoints: () => registry.liveEndpoints(), providers });

  const { signingSecret } = await registry.register({ baseUrl: plugin.url });
  plugin.configureSecret(signingSecret);
  const endpoint = registry.endpoint('com.example.bare-echo')!;

  const say = async (text: string) => {
    const record = await dispatcher.dispatch(
      consoleProvider.createEvent({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1', displayName: 'Ada' }, text }),
    );
    await endpoint.idle();
    return record;
  };

  const first = await say('hi <b>there</b>');
  expect(first.deliveries).toEqual([
    expect.objectContaining({ pluginId: 'com.example.bare-echo', transport: 'http', accepted: true, error: null }),
  ]);
  expect(first.outbound).toEqual([
    expect.objectContaining({
      kind: 'reply',
      target: { type: 'group', id: 'g1' },
      body: { msg_type: 0, content: 'echo: hi <\u2060b>there<\u2060/b>', msg_id: first.event.message.id, msg_seq: 1 },
      error: null,
    }),
  ]);

  await plugin.stop();
  for (let i = 0; i < 5; i++) {
    const down = await say('anyone?');
    expect(down.deliveries[0]).toMatchObject({ accepted: false, error: { code: 'http.unreachable' } });
    expect(down.outbound).toEqual([]);
  }
  expect((await registry.get('com.example.bare-echo')).health).toMatchObject({
    status: 'unreachable',
    lastError: { code: 'http.unreachable' },
  });
  // While the circuit is open the plugin is skipped, not waited for.
  expect((await say('still there?')).recipients).toEqual([]);

  await plugin.restart();
  await new Promise((r) => setTimeout(r, 350));
  const back = await say('back?');
  expect(back.deliveries[0]).toMatchObject({ accepted: true, error: null });
  expect(back.outbound[0]).toMatchObject({ body: { content: 'echo: back?' } });
  expect((await registry.get('com.example.bare-echo')).health).toMatchObject({ circuit: 'closed' });
});
