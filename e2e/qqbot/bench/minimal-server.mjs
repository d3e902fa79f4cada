// The baseline of the QQ Bot benchmark: the least a webhook server can do for
// the same work, written by hand with node:http, node:crypto and undici.
// It derives the Ed25519 key from the secret, verifies X-Signature-Ed25519
// over X-Signature-Timestamp + body, parses the event, answers {"op":12},
// then sends one Markdown reply that mentions the sender through the
// platform's OpenAPI with a cached access token. No routing, no plugin
// process, no event log, no replay memory.
//
//   node minimal-server.mjs --app-id ID --secret SECRET --api URL --token-url URL
// Prints {"listening": "http://127.0.0.1:PORT/"} once it listens.
import { createPrivateKey, createPublicKey, verify } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values } = parseArgs({
  options: { 'app-id': { type: 'string' }, secret: { type: 'string' }, api: { type: 'string' }, 'token-url': { type: 'string' } },
});
const appId = values['app-id'];
const secret = Buffer.from(values.secret);
let seed = secret;
while (seed.length < 32) seed = Buffer.concat([seed, secret]);
const privateKey = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed.subarray(0, 32)]),
  format: 'der',
  type: 'pkcs8',
});
const publicKey = createPublicKey(privateKey);
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
let token;

async function accessToken() {
  token ??= request(values['token-url'], {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ appId, clientSecret: values.secret }),
  })
    .then((res) => res.body.json())
    .then((b) => b.access_token);
  return token;
}

async function reply(d) {
  const body = {
    msg_type: 2,
    markdown: { content: `<qqbot-at-user id="${d.author.member_openid}" /> ${d.content.trim().replace(/^\/echo\s*/, '')}` },
    msg_id: d.id,
    msg_seq: 1,
  };
  const res = await request(`${values.api}/v2/groups/${encodeURIComponent(d.group_openid)}/messages`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', authorization: `QQBot ${await accessToken()}`, 'x-union-appid': appId },
    body: JSON.stringify(body),
  });
  await res.body.dump();
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const timestamp = req.headers['x-signature-timestamp'] ?? '';
    const signature = req.headers['x-signature-ed25519'] ?? '';
    const ok =
      /^[0-9a-f]{128}$/i.test(signature) &&
      verify(null, Buffer.concat([Buffer.from(timestamp), body]), publicKey, Buffer.from(signature, 'hex'));
    if (!ok) {
      res.writeHead(401).end();
      return;
    }
    const payload = JSON.parse(body.toString('utf8'));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"op":12}');
    if (payload.op === 0 && payload.t === 'GROUP_AT_MESSAGE_CREATE')
      reply(payload.d).catch((e) => process.stderr.write(`reply failed: ${e}\n`));
  });
});
server.keepAliveTimeout = 10_000;
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${server.address().port}/` })}\n`),
);
process.on('SIGTERM', () => process.exit(0));
