// Raw baseline, plugin side: the same exchange as the fixture plugin in the
// host benchmark (the same event envelope in; the ACK, the same reply request
// and, once the reply is answered, events.completed out) with minimal
// Content-Length framing and no validation at all.
let buf = Buffer.alloc(0);
let nextId = 1;
const write = (m) => {
  const body = Buffer.from(JSON.stringify(m));
  process.stdout.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
};
const pending = new Map();
process.stdin.on('data', (chunk) => {
  buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
  for (;;) {
    const h = buf.indexOf('\r\n\r\n');
    if (h < 0) return;
    const len = Number(/Content-Length: (\d+)/.exec(buf.subarray(0, h).toString())[1]);
    if (buf.length < h + 4 + len) return;
    const msg = JSON.parse(buf.subarray(h + 4, h + 4 + len).toString());
    buf = buf.subarray(h + 4 + len);
    if (msg.method === 'events.message') {
      const id = nextId++;
      const ev = msg.params;
      pending.set(id, { eventId: ev.eventId, started: performance.now() });
      // The decision first, as the fixture sends it: accepted on admission.
      write({ jsonrpc: '2.0', id: msg.id, result: { eventId: ev.eventId, accepted: true, intercepted: false, error: null } });
      // The same reply the fixture plugin sends: Markdown, a mention of the sender, the args.
      const message = {
        format: 'markdown',
        parts: [
          { type: 'mention', target: 'user', id: ev.sender.mentionId },
          { type: 'text', text: ` ${ev.command.args}` },
        ],
      };
      write({ jsonrpc: '2.0', id, method: 'messages.reply', params: { token: 't', eventId: ev.eventId, message } });
    } else if (msg.method === undefined) {
      // The answer to a reply ends the work: report it. The answer to events.completed needs nothing.
      const work = pending.get(msg.id);
      if (!work) continue;
      pending.delete(msg.id);
      const id = nextId++;
      write({
        jsonrpc: '2.0',
        id,
        method: 'events.completed',
        params: { token: 't', eventId: work.eventId, error: null, durationMs: performance.now() - work.started },
      });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
