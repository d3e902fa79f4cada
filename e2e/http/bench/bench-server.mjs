#!/usr/bin/env node
// The plugin side of the HTTP delivery benchmark: a node:http server that
// reads each event body and answers one fixed message response (one reply).
// It does not check signatures, so the host's signed requests and the raw
// baseline's unsigned ones cost the server the same: the benchmark measures
// what the host adds on its own side.
import { createServer } from 'node:http';

const response = Buffer.from(
  JSON.stringify({
    accepted: true,
    intercepted: false,
    outboundMessages: [{ format: 'text', parts: [{ type: 'text', text: 'echo: hello' }] }],
    error: null,
  }),
);
const headers = { 'content-type': 'application/json', 'content-length': String(response.length) };

const server = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(response);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const { address, port } = server.address();
  process.stdout.write(`${JSON.stringify({ listening: `http://${address}:${port}` })}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
