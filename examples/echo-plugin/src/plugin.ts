import { join } from 'node:path';
import { definePlugin, literal, readManifest } from '@host/plugin-sdk-v2';

/**
 * The plugin: one definition, run over stdio by src/index.ts (the packaged
 * entry) and driven in memory by the tests. manifest.json is read from the
 * project root, one folder up from both src/ and dist/.
 */
export default definePlugin({
  manifest: readManifest(join(__dirname, '..', 'manifest.json')),
  commands: {
    // "/echo hello" -> a Markdown reply that mentions the sender (groups only;
    // Markdown is not available in one-to-one chats, so those get plain text).
    // literal() shows the user's text as written: Markdown in it (a link, an
    // image) is escaped instead of posted by the bot.
    async echo(ctx) {
      const text = ctx.args || 'nothing';
      if (ctx.event.conversation.type === 'group') {
        await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' said: **', literal(text), '**');
      } else {
        await ctx.reply('You said: ', text);
      }
    },
  },
});
