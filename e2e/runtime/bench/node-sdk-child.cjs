// The Node SDK's smallest plugin, for the cold-start comparison of go-sdk.ts: it answers the handshake
// and would echo like the Go child. Needs the built SDK (npx nx run plugin-sdk:build).
const { join } = require('node:path');
const { definePlugin, at } = require(join(__dirname, '../../../libs/plugin-sdk/dist/index.cjs'));

definePlugin({
  pluginId: 'com.example.bench',
  commands: {
    async echo(ctx) {
      await ctx.replyMarkdown(at.user(ctx.sender), ` ${ctx.command.args}`);
    },
  },
}).main();
