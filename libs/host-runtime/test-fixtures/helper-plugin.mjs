#!/usr/bin/env node
// A tiny stdio plugin for the runtime's own unit tests, its behaviour chosen
// by one argument (like a helper process): it answers host.initialize and
// plugin.ping, and answers events.message as the mode says.
//   ack            ACK accepted, then events.completed
//   ack-invalid    ACK with another eventId
//   rpc-error=N    answer events.message with JSON-RPC error code N
//   exit-after-ack ACK accepted, then exit 3 before completing
//   intercept      ACK accepted and intercepted, then complete
//   cancel-log     ACK accepted, never complete; on events.cancel write "cancel <eventId> <reason>" to stderr
//   crash-stack    at start, write a Node-style uncaught error (source line, error line, many stack frames) and exit 1
//   usage          without --host-stdio: print help to stderr and exit 2, as the SDK does
//   ignore-eof     like ack, but keeps running when stdin closes (a plugin that outlives a dead host)
//   settings       like ack, and takes settings.changed (declared in the handshake), writing "settings <json>" to stderr;
//                  refuses values with mode "refuse" (PluginError with a stack trace after its reason, as some runtimes send)
//   import=NAME    like ack, after `import(NAME)` and `require(NAME)` at start (an uncaught failure ends the process)
const hostStdio = process.argv.includes('--host-stdio');
const mode = hostStdio ? (process.argv[3] ?? 'ack') : 'usage';
if (mode === 'usage') {
  process.stderr.write('helper: a protocol v2 chat-bot plugin.\n\nThe host starts this program with --host-stdio and speaks JSON-RPC over stdin/stdout;\nit is not meant to be run by hand.\n');
  process.exit(2);
}
if (mode === 'crash-stack') {
  const frames = Array.from({ length: 12 }, (_, i) => `    at frame${i} (file:///plugin/node_modules/dep/index.js:${i + 1}:1)`);
  process.stderr.write(
    [
      'file:///plugin/index.mjs:1',
      "import { definePlugin } from '@host/plugin-sdk-v2';",
      '         ^',
      '',
      "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@host/plugin-sdk-v2' imported from /plugin/index.mjs",
      ...frames,
      "  code: 'ERR_MODULE_NOT_FOUND'",
      '}',
      '',
      'Node.js v20.0.0',
      '',
    ].join('\n'),
  );
  process.exit(1);
}
if (mode.startsWith('import=')) {
  const name = mode.slice('import='.length);
  const { createRequire } = await import('node:module');
  createRequire(import.meta.url)(name);
  await import(name);
}
let buffer = Buffer.alloc(0);
let token = '';
let nextId = 1;

function send(message) {
  const json = JSON.stringify({ jsonrpc: '2.0', ...message });
  process.stdout.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
}

function onMessage(m) {
  if (m.method === 'host.initialize') {
    token = m.params.token;
    const capabilities = mode === 'settings' ? { capabilities: ['settings.changed'] } : {};
    return send({ id: m.id, result: { protocolVersion: 2, pluginId: m.params.pluginId, sdkName: 'helper', sdkVersion: '0.0.1', encoding: 'json', ...capabilities } });
  }
  if (m.method === 'plugin.ping') return send({ id: m.id, result: {} });
  if (m.method === 'plugin.stop') {
    send({ id: m.id, result: { accepted: true } });
    return setTimeout(() => process.exit(0), 10);
  }
  if (m.method === 'events.cancel') {
    process.stderr.write(`cancel ${m.params.eventId} ${m.params.reason}\n`);
    return send({ id: m.id, result: { cancelled: true } });
  }
  if (m.method === 'settings.changed') {
    if (m.params.settings.mode === 'refuse') {
      const stack = ['Error: mode "refuse" is not one this plugin knows', '    at check (file:///plugin/index.mjs:3:9)', '    at frame1 (file:///plugin/index.mjs:7:1)'];
      return send({ id: m.id, error: { code: -32000, message: stack.join('\n') } });
    }
    process.stderr.write(`settings ${JSON.stringify(m.params.settings)}\n`);
    return send({ id: m.id, result: { applied: true } });
  }
  if (m.method !== 'events.message') return;
  const eventId = m.params.eventId;
  const [name, value] = mode.split('=');
  if (name === 'ack-invalid') return send({ id: m.id, result: { eventId: 'someone-else', accepted: true } });
  if (name === 'rpc-error') return send({ id: m.id, error: { code: Number(value), message: 'refused by the plugin' } });
  send({ id: m.id, result: { eventId, accepted: true, intercepted: name === 'intercept' } });
  if (name === 'exit-after-ack') return setTimeout(() => process.exit(3), 10);
  if (name === 'cancel-log') return;
  send({ id: `c${nextId++}`, method: 'events.completed', params: { token, eventId, durationMs: 1 } });
}

process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())[1]);
    if (buffer.length < end + 4 + length) return;
    const body = buffer.subarray(end + 4, end + 4 + length).toString();
    buffer = buffer.subarray(end + 4 + length);
    onMessage(JSON.parse(body));
  }
});
process.stdin.on('end', () => {
  // ignore-eof: a plugin that does not exit when the host goes away.
  if (mode === 'ignore-eof') setInterval(() => undefined, 1000);
  else process.exit(0);
});
