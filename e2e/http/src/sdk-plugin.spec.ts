// An HTTP plugin written with the Node SDK's HTTP helper, registered by URL
// and reached through the real dispatcher: a command with a typed mention
// in Markdown comes back rendered for the provider.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleProvider } from '@host/host-console';
import { Dispatcher, ProviderRegistry } from '@host/host-dispatch';
import { HttpPluginRegistry } from '@host/host-http';
import { JsonRegistryStore } from '@host/host-store';
import { definePlugin } from '@host/plugin-sdk-v2';
import { createHttpHandler, type HttpHandler } from '@host/plugin-sdk-v2/http';

const plugin = definePlugin({
  manifest: {
    pluginId: 'com.example.sdk-greeter',
    name: 'Greeter',
    version: '1.0.0',
    author: 'Example',
    protocolVersion: 2,
    eventSubscriptions: [{ eventType: 'message.created' }],
    permissions: ['messages.reply'],
    commands: [{ name: 'greet', prefixes: ['/'], priority: 10 }],
  },
  commands: {
    async greet(ctx) {
      await ctx.replyMarkdown(ctx.at.user(ctx.sender), ` **hello** ${ctx.command?.args ?? ''}`);
    },
  },
});

let dir: string;
let store: JsonRegistryStore;
let registry: HttpPluginRegistry;
let server: Server;
let handler: HttpHandler;
const log = () => undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-http-sdk-'));
  store = await JsonRegistryStore.open(join(dir, 'state'));
  registry = new HttpPluginRegistry({ store });
  // The secret exists only after registration; until the operator configures
  // it, the plugin runs with none that the host could match.
  handler = createHttpHandler(plugin, { secret: 'not-configured-yet', log });
  server = createServer((req: IncomingMessage, res: ServerResponse) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterEach(async () => {
  await registry.close();
  await handler.close();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('registers the SDK plugin, routes a command to it and renders its Markdown reply with the typed mention', async () => {
  const { port } = server.address() as { port: number };
  const { plugin: view, signingSecret } = await registry.register({ baseUrl: `http://127.0.0.1:${port}` });
  expect(view).toMatchObject({ pluginId: 'com.example.sdk-greeter', capabilityNames: ['ReceiveMessages', 'HttpTransport'] });
  await handler.close();
  handler = createHttpHandler(plugin, { secret: signingSecret, log });

  const providers = new ProviderRegistry();
  const consoleProvider = new ConsoleProvider();
  providers.register(consoleProvider);
  const dispatcher = new Dispatcher({ endpoints: () => registry.liveEndpoints(), providers });
  const record = await dispatcher.dispatch(
    consoleProvider.createEvent({
      conversation: { type: 'group', id: 'g1' },
      sender: { id: 'u1', displayName: 'Ada' },
      text: '/greet <you>',
    }),
  );
  await registry.endpoint('com.example.sdk-greeter')!.idle();

  expect(record.deliveries).toEqual([
    expect.objectContaining({
      pluginId: 'com.example.sdk-greeter',
      accepted: true,
      error: null,
      command: expect.objectContaining({ name: 'greet' }),
    }),
  ]);
  expect(record.outbound).toEqual([
    expect.objectContaining({
      kind: 'reply',
      body: {
        msg_type: 2,
        markdown: { content: '<qqbot-at-user id="u1" /> **hello** <\u2060you>' },
        msg_id: record.event.message.id,
        msg_seq: 1,
      },
      error: null,
    }),
  ]);
});
