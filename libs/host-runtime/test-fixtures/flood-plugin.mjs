#!/usr/bin/env node
// A misbehaving stdio plugin for the runtime's hardening tests: it answers
// host.initialize, then stops reading stdin and writes valid log.write
// requests as fast as its stdout takes them, forever. It never reads the
// answers, so everything the host writes back stays in the pipe.
let buffer = Buffer.alloc(0);
let nextId = 1;

function frame(message) {
  const json = JSON.stringify({ jsonrpc: '2.0', ...message });
  return `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
}

function flood(token) {
  process.stdin.pause();
  const batch = () => {
    let text = '';
    for (let i = 0; i < 500; i++) {
      text += frame({ id: nextId, method: 'log.write', params: { token, level: 'info', message: `flood ${nextId}` } });
      nextId++;
    }
    // Writes to a pipe block on Linux once it is full: the plugin runs as fast as the host reads.
    process.stdout.write(text);
    setImmediate(batch);
  };
  batch();
}

function onData(chunk) {
  buffer = Buffer.concat([buffer, chunk]);
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return;
  const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())[1]);
  if (buffer.length < end + 4 + length) return;
  const m = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());
  if (m.method !== 'host.initialize') return;
  process.stdin.off('data', onData);
  process.stdout.write(frame({ id: m.id, result: { protocolVersion: 2, pluginId: m.params.pluginId, sdkName: 'flood', sdkVersion: '0.0.1', encoding: 'json' } }));
  flood(m.params.token);
}

process.stdin.on('data', onData);
