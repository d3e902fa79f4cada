// The same plugin as an HTTP service: run it yourself (node dist/server.js)
// and register its base URL in the host ("Register HTTP plugin").
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpHandler } from '@host/plugin-sdk-v2/http';
import plugin from './plugin';

const secret = process.env['HOST_PLUGIN_SECRET'];
if (!secret) {
  console.error('Set HOST_PLUGIN_SECRET to the signing secret the host showed when you registered this plugin.');
  process.exit(1);
}

// Requests are signed by the host; unsigned, stale and replayed ones get 401.
// Beyond 16 events at once the service answers 503, which the host retries.
const handler = createHttpHandler(plugin, { secret, maxConcurrentEvents: 16 });
const server = createServer(handler);
server.listen(Number(process.env['PORT'] ?? 8080), process.env['HOST'] ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  console.log(`Echo plugin listening on http://${address}:${port} (register this base URL in the host)`);
});

// On shutdown: stop accepting, let in-flight events finish, run onStop.
process.on('SIGTERM', () => {
  server.close();
  void handler.close().then(() => process.exit(0));
});
