// Raw baseline, plugin side: the same exchange as the host benchmark (the same
// event envelope in, the same reply request out, the ACK out) with minimal
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
      pending.set(id, msg);
      // The same reply the fixture plugin sends: Markdown, a mention of the sender, the args.
      const ev = msg.params;
      const message = { format: 'markdown', parts: [{ type: 'mention', target: 'user', id: ev.sender.mentionId }, { type: 'text', text: ` ${ev.command.args}` }] };
      write({ jsonrpc: '2.0', id, method: 'messages.reply', params: { token: 't', eventId: ev.eventId, message } });
    } else if (msg.method === undefined) {
      const ev = pending.get(msg.id);
      pending.delete(msg.id);
      write({ jsonrpc: '2.0', id: ev.id, result: { eventId: ev.params.eventId, accepted: true, intercepted: false, error: null } });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
