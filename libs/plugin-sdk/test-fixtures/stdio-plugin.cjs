// A plugin built on the SDK's CommonJS build, for the runtime tests. Each
// command exercises one behaviour; see src/stdio/runtime.spec.ts.
const sdk = require('../dist/index.cjs');

// Printed before main() runs: in protocol mode this must reach stderr, not stdout.
console.log('module loaded');
process.stdout.write('raw stdout write\n');

const manifest = {
  pluginId: 'com.example.fixture',
  name: 'Fixture',
  version: '1.0.0',
  author: 'Tests',
  protocolVersion: 2,
  sdkVersion: sdk.SDK_VERSION,
  transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['stdio-plugin.cjs', '--host-stdio'] } },
  eventSubscriptions: [{ eventType: 'message.created' }],
  permissions: ['messages.reply'],
  commands: [{ name: 'echo' }, { name: 'slow' }, { name: 'fail' }, { name: 'catch' }, { name: 'wait' }],
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const plugin = sdk.definePlugin({
  manifest,
  onStart(ctx) {
    console.info('onStart ran');
    ctx.log.info('started', { settings: ctx.settings });
  },
  onStop(ctx) {
    ctx.log.info('stopping');
  },
  commands: {
    async echo(ctx) {
      console.log('handler console.log');
      await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' said ', ctx.command.args);
    },
    async slow(ctx) {
      await sleep(Number(ctx.command.args) || 300);
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
  },
});

void plugin.main();
