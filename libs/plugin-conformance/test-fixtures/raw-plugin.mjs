// A stdio plugin written against the wire protocol alone, without any SDK,
// as an author in a language without an SDK would write it. It conforms
// unless the FAULT environment variable (set in its manifest) names one
// deliberate fault; the conformance tests check that the suite names the
// check each fault breaks.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const FAULT = process.env.FAULT ?? '';
const manifest = JSON.parse(readFileSync(join(process.cwd(), 'manifest.json'), 'utf8'));
const PLUGIN_ID = manifest.pluginId;

if (!process.argv.includes('--host-stdio')) {
  if (FAULT === 'help-on-stdout') {
    process.stdout.write('raw-plugin: start me with --host-stdio\n');
    process.exit(0);
  }
  process.stderr.write('raw-plugin: a protocol v2 plugin; the host starts it with --host-stdio\n');
  process.exit(2);
}

if (FAULT === 'stdout-pollution') process.stdout.write('raw-plugin starting\n');

let init = null;
let running = 0;
let stopping = false;
let nextId = 1;
const pending = new Map();
const waitingPings = [];

function send(message) {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  process.stdout.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
}
const respond = (id, result) => send({ jsonrpc: '2.0', id, result });
const respondError = (id, code, message, data) => send({ jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } });
function call(method, params) {
  const id = `p${nextId++}`;
  send({ jsonrpc: '2.0', id, method, params });
  return new Promise((resolve) => pending.set(id, resolve));
}

function maybeExit() {
  if (stopping && running === 0 && FAULT !== 'ignores-stop') process.exit(0);
}

function pingAnswer(id, params) {
  respond(id, { ...(params?.nonce !== undefined ? { nonce: params.nonce } : {}), inFlightEvents: running, queuedEvents: 0 });
}

function idle() {
  while (running === 0 && waitingPings.length > 0) {
    const [id, params] = waitingPings.shift();
    pingAnswer(id, params);
  }
  maybeExit();
}

async function handle(event) {
  // Markdown everywhere: in a one-to-one chat the host refuses it, and the handler reports the host's code.
  const format = 'markdown';
  const token = FAULT === 'no-token' ? 'not-the-token' : init.token;
  const answer = await call('messages.reply', {
    token,
    eventId: event.eventId,
    message: { format, parts: [{ type: 'text', text: `**got** ${event.message.content}` }] },
  });
  if (!answer.error) return null;
  const code = FAULT === 'markdown-c2c-generic' ? 'plugin.handler_failed' : (answer.error.data?.code ?? 'plugin.handler_failed');
  return { code, message: answer.error.message };
}

async function onEvent(id, event) {
  if (stopping) return respondError(id, -32007, 'stopping');
  if (running >= init.runtime.maxConcurrentEvents && FAULT !== 'no-overloaded') return respondError(id, -32006, 'all handlers are busy');
  // An observer (no command matched) declines: nothing follows a decline.
  if (!event.command) return respond(id, { eventId: event.eventId, accepted: false });
  running++;
  if (FAULT !== 'ack-after-handler') respond(id, { eventId: event.eventId, accepted: true });
  const error = await handle(event);
  if (FAULT === 'ack-after-handler') respond(id, { eventId: event.eventId, accepted: true });
  // The slot is free once the completion is sent, as the host counts it.
  running--;
  const completed = FAULT === 'no-completion' ? null : call('events.completed', { token: init.token, eventId: event.eventId, error });
  idle();
  await completed;
}

// An event of another type (events.deliver): taken and answered with a text, as a greeting plugin would; the host
// refuses a reply to bot.removed, and the handler reports the host's code.
async function onChatEvent(id, event) {
  if (stopping) return respondError(id, -32007, 'stopping');
  if (FAULT === 'deliver-unhandled') return respondError(id, -32601, 'unknown method events.deliver');
  if (running >= init.runtime.maxConcurrentEvents) return respondError(id, -32006, 'all handlers are busy');
  running++;
  respond(id, { eventId: event.eventId, accepted: true });
  const part =
    FAULT === 'deliver-file-reply'
      ? { type: 'file', url: 'https://example.com/greeting.pdf', fileName: 'greeting.pdf' }
      : { type: 'text', text: `got ${event.eventType}${event.interaction ? ` ${event.interaction.data}` : ''}` };
  const answer = await call('messages.reply', { token: init.token, eventId: event.eventId, message: { format: 'text', parts: [part] } });
  const error = answer.error ? { code: answer.error.data?.code ?? 'plugin.handler_failed', message: answer.error.message } : null;
  running--;
  const completed = FAULT === 'deliver-no-completion' ? null : call('events.completed', { token: init.token, eventId: event.eventId, error });
  idle();
  await completed;
}

function onRequest({ id, method, params }) {
  if (method === 'host.initialize') {
    if (init && FAULT !== 'reinitialize') return respondError(id, -32004, 'already initialized');
    if (params.pluginId !== PLUGIN_ID && FAULT !== 'accepts-other-id') {
      respondError(id, -32000, `this is ${PLUGIN_ID}, not ${params.pluginId}`);
      process.exit(1);
    }
    init = params;
    respond(id, { protocolVersion: 2, pluginId: PLUGIN_ID, sdkName: 'raw', sdkVersion: '1.0.0', encoding: 'json' });
    if (FAULT === 'orphan-child') spawn('sleep', ['300'], { stdio: 'ignore' }).unref();
    // A helper that leaves the process group (a new session): found by the run's marker in its environment.
    if (FAULT === 'escaped-child') spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300000)'], { stdio: 'ignore', detached: true }).unref();
    return;
  }
  if (!init && FAULT !== 'no-not-initialized') return respondError(id, -32003, 'not initialized');
  switch (method) {
    case 'plugin.ping':
      if (FAULT === 'ping-blocked' && running > 0) return void waitingPings.push([id, params]);
      return pingAnswer(id, params);
    case 'events.message':
      return void onEvent(id, params);
    case 'events.deliver':
      return void onChatEvent(id, params);
    case 'events.cancel':
      return respond(id, { cancelled: false });
    case 'plugin.stop':
      stopping = true;
      respond(id, { accepted: true });
      return maybeExit();
    default:
      if (FAULT === 'no-method-not-found') return;
      return respondError(id, -32601, `unknown method ${method}`);
  }
}

function onMessage(message) {
  if (message.method !== undefined) {
    if (message.id !== undefined) onRequest(message);
    return;
  }
  const resolve = pending.get(message.id);
  pending.delete(message.id);
  resolve?.(message);
}

// Strict framing: Content-Length (and Content-Type) only; anything else is fatal.
let buffer = Buffer.alloc(0);
function fatal(why) {
  if (FAULT === 'tolerant-framing') {
    buffer = Buffer.alloc(0);
    return false;
  }
  process.stderr.write(`raw-plugin: bad frame from the host: ${why}\n`);
  process.exit(1);
}
process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    let length = -1;
    for (const line of buffer.subarray(0, end).toString('ascii').split('\r\n')) {
      const m = /^([^:]+):\s*(.*)$/.exec(line);
      if (!m) return void fatal(`header line ${JSON.stringify(line)}`);
      const name = m[1].toLowerCase();
      if (name === 'content-length') length = Number(m[2]);
      else if (name !== 'content-type') return void fatal(`header ${m[1]}`);
    }
    if (!(length > 0)) return void fatal('no Content-Length');
    if (init && length > init.runtime.maxPayloadLength) return void fatal(`Content-Length ${length} is beyond the limit`);
    if (buffer.length < end + 4 + length) return;
    const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    buffer = buffer.subarray(end + 4 + length);
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      if (fatal('payload is not JSON') === false) continue;
      return;
    }
    onMessage(message);
  }
});
process.stdin.on('end', () => {
  if (FAULT === 'no-eof-exit') setInterval(() => undefined, 1000);
  else process.exit(0);
});
