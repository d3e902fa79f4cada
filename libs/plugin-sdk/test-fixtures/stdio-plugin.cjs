// A plugin built on the SDK's CommonJS build, for the runtime tests. Each
// command exercises one behaviour; see src/stdio/runtime.spec.ts. Modes by
// argument: --intercepts (an interceptor that declares messages.intercept),
// --intercepts-undeclared (one that forgets the permission).
const sdk = require('../dist/index.cjs');

// Printed before main() runs: in protocol mode this must reach stderr, not stdout.
console.log('module loaded');
process.stdout.write('raw stdout write\n');

const intercepts = process.argv.includes('--intercepts') || process.argv.includes('--intercepts-undeclared');
const manifest = {
  pluginId: 'com.example.fixture',
  name: 'Fixture',
  version: '1.0.0',
  author: 'Tests',
  protocolVersion: 2,
  sdkVersion: sdk.SDK_VERSION,
  transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['stdio-plugin.cjs', '--host-stdio'] } },
  eventSubscriptions: [{ eventType: 'message.created' }],
  permissions: process.argv.includes('--intercepts')
    ? ['messages.reply', 'messages.send', 'messages.intercept', 'media.upload']
    : ['messages.reply', 'messages.send', 'media.upload'],
  commands: [
    { name: 'echo' },
    { name: 'slow' },
    { name: 'fail' },
    { name: 'catch' },
    { name: 'wait' },
    { name: 'cancellable' },
    { name: 'intercept' },
    { name: 'pass' },
    { name: 'send' },
    { name: 'upload' },
  ],
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const plugin = sdk.definePlugin({
  manifest,
  intercepts,
  async onStart(ctx) {
    console.info('onStart ran');
    ctx.log.info('started', { settings: ctx.settings });
    // Holds events back (they wait for onStart) when the test asks for it.
    if (ctx.settings.startDelayMs) await sleep(ctx.settings.startDelayMs);
    // A send outside any handler, when the test asks for it.
    if (ctx.settings.startSendTo) await ctx.messages.group(ctx.settings.startSendTo).send('from onStart');
  },
  onStop(ctx) {
    ctx.log.info('stopping');
  },
  commands: {
    async echo(ctx) {
      console.log('handler console.log');
      await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' said ', ctx.args);
    },
    async slow(ctx) {
      await sleep(Number(ctx.args) || 300);
      void ctx.reply('slow done');
    },
    async fail() {
      throw new sdk.HandlerError('fixture.failed', 'asked to fail');
    },
    async catch(ctx) {
      try {
        await ctx.reply('hello');
      } catch (error) {
        ctx.log.warn('caught', { name: error.name, code: error.code, fromHost: error.fromHost });
      }
    },
    async wait(ctx) {
      // Awaits a reply the host never answers.
      await ctx.reply('waiting');
    },
    async cancellable(ctx) {
      // Runs until its signal aborts, then reports the reason and returns.
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      ctx.log.info('aborted', { code: ctx.signal.reason && ctx.signal.reason.code, message: ctx.signal.reason && ctx.signal.reason.message });
    },
    async intercept(ctx) {
      ctx.intercept();
      await sleep(Number(ctx.args) || 300);
    },
    async send(ctx) {
      // messages.send to the group named in the args, from inside the handler.
      await ctx.messages.group(ctx.args).send('from a handler');
    },
    async upload(ctx) {
      // Uploads a PNG-signed file of the size in the args and replies with it; a refusal is logged with its code.
      const bytes = Buffer.alloc(Number(ctx.args) || 100);
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes);
      try {
        const media = await ctx.uploadMedia(bytes, 'image/png', { fileName: 'big.png' });
        await ctx.reply(sdk.image.fromMedia(media, { alt: 'uploaded' }));
      } catch (error) {
        ctx.log.warn('upload refused', { name: error.name, code: error.code, fromHost: error.fromHost });
      }
    },
    async pass(ctx) {
      ctx.pass();
      await sleep(Number(ctx.args) || 300);
    },
  },
});

void plugin.main();
