// The same kind of plugin on the SDK's ES module build.
import { definePlugin } from '../dist/index.mjs';

console.log('esm module loaded');

const plugin = definePlugin({
  pluginId: 'com.example.esm',
  async onMessage(ctx) {
    await ctx.reply('esm: ', ctx.text);
  },
});

await plugin.main();
