// Plays the QQ Bot Open Platform against a host, for trying an account
// without a real bot: starts the local fake of the OpenAPI (token and message
// endpoints), waits until the host passes the callback-URL validation of the
// webhook, posts one signed group @-message and prints the reply the host
// sent to the platform.
//
//   node tools/scripts/ts-run.mjs libs/host-qqbot/scripts/fake-platform.ts \
//     --webhook http://127.0.0.1:8080/api/qqbot/webhook/main --app-id 1000001 --secret my-test-secret \
//     [--port 9911] [--text "/echo hello"] [--group GROUP_OPENID] [--member MEMBER_OPENID]
//
// Give the account apiBaseUrl http://127.0.0.1:<port> and tokenUrl
// http://127.0.0.1:<port>/app/getAppAccessToken (printed at start).
import { parseArgs } from 'node:util';
import { FakeQqPlatform, WebhookSigner } from '../src/testing';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      webhook: { type: 'string' },
      'app-id': { type: 'string' },
      secret: { type: 'string' },
      port: { type: 'string', default: '9911' },
      text: { type: 'string', default: '/echo hello from the fake platform' },
      group: { type: 'string', default: 'FAKE_GROUP_OPENID' },
      member: { type: 'string', default: 'FAKE_MEMBER_OPENID' },
    },
  });
  const { webhook, secret } = values;
  const appId = values['app-id'];
  if (!webhook || !appId || !secret) {
    console.error(
      'usage: fake-platform.ts --webhook <webhook URL of the account> --app-id <id> --secret <secret> [--port 9911] [--text "..."]',
    );
    process.exit(2);
  }
  const platform = await FakeQqPlatform.start({ appId, secret, port: Number(values.port) });
  console.log(`fake platform: apiBaseUrl ${platform.apiBaseUrl}  tokenUrl ${platform.tokenUrl}`);
  const signer = new WebhookSigner({ appId, secret, webhookUrl: webhook });
  try {
    for (;;) {
      const answer = await signer.validation('FakePlatformCheck01', String(Math.floor(Date.now() / 1000))).catch((e: Error) => ({
        status: 0,
        body: e.message,
      }));
      if (answer.status === 200) {
        console.log(`validation passed: ${JSON.stringify(answer.body)}`);
        break;
      }
      console.log(`validation not passed yet (${answer.status} ${JSON.stringify(answer.body)}); retrying in 2 s`);
      await new Promise((r) => setTimeout(r, 2000));
    }
    const answer = await signer.post(
      signer.groupAtMessage({ groupOpenId: values.group!, memberOpenId: values.member!, content: ` ${values.text}` }),
    );
    console.log(`group @-message posted: ${answer.status} ${JSON.stringify(answer.body)}`);
    try {
      await platform.waitForMessages(1, 30_000);
    } catch {
      console.error(
        `no reply reached the fake platform within 30 s. Check that the account's apiBaseUrl is ${platform.apiBaseUrl} and its tokenUrl ` +
          `${platform.tokenUrl}, and that a running plugin answers "${values.text}" (the admin app's QQ Bot tab shows the last event, ` +
          'its Events page what became of it).',
      );
      process.exitCode = 1;
      return;
    }
    const sent = platform.messages[0]!;
    console.log(
      `reply received at POST ${sent.path} with ${sent.authorization?.replace(/ .*/, ' <token>')}:\n${JSON.stringify(sent.body, null, 2)}`,
    );
    // What QQ clients show as a mention: the member's openid in the tag, in text (msg_type 0) or Markdown (msg_type 2).
    const body = sent.body as { msg_type?: unknown; content?: unknown; markdown?: { content?: unknown } };
    const content = body.msg_type === 2 ? body.markdown?.content : body.content;
    const tag = `<qqbot-at-user id="${values.member}" />`;
    const format = body.msg_type === 2 ? 'Markdown' : 'text (the account has no Markdown permission: "markdown": true turns it on)';
    console.log(
      typeof content === 'string' && content.includes(tag)
        ? `${format} reply with a mention of the sender (${tag}): QQ shows it as @<their name>`
        : `the reply has no mention of the sender ${values.member} (msg_type ${String(body.msg_type)})`,
    );
  } finally {
    await signer.close();
    await platform.close();
  }
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
