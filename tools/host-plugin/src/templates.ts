import { SDK_VERSION } from '@host/plugin-sdk-v2';
import { richStarterManifest, STARTER_IMAGE_URL } from './starter-rich';

/** What `init` asks for; everything has a default. */
export interface InitOptions {
  pluginId: string;
  name: string;
  author: string;
  description: string;
  /** Version spec of the SDK dependency (a version range, `file:` path or tarball). */
  sdk: string;
  /** Version spec of this CLI as a dev dependency. */
  cli: string;
  /**
   * The plugin stops lower-priority plugins from receiving the commands it
   * handles: the manifest declares `messages.intercept` and the handler calls
   * `ctx.intercept()`.
   */
  intercepts?: boolean;
}

/** A JSON file as every template writes it: two-space indent, final newline. */
export const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** What every language's starter manifest is made of; only the SDK version and the start command differ. */
export interface StarterManifest {
  pluginId: string;
  name: string;
  author: string;
  description: string;
  sdkVersion: string;
  /** How the host starts the plugin; `--host-stdio` is added. */
  start: { command: string; args: string[] };
  intercepts?: boolean;
  /** A `$schema` for editors, where the project has the schema file. */
  schema?: string;
}

/** manifest.json of a new project in any language: an `echo` command that replies. */
export function starterManifest(m: StarterManifest): string {
  return json({
    ...(m.schema ? { $schema: m.schema } : {}),
    pluginId: m.pluginId,
    name: m.name,
    version: '1.0.0',
    author: m.author,
    description: m.description,
    protocolVersion: 2,
    sdkVersion: m.sdkVersion,
    transport: {
      type: 'stdio-jsonrpc',
      stdio: { command: m.start.command, args: [...m.start.args, '--host-stdio'], workingDirectory: '.' },
    },
    eventSubscriptions: [{ eventType: 'message.created' }],
    permissions: m.intercepts ? ['messages.reply', 'messages.intercept'] : ['messages.reply'],
    commands: [{ name: 'echo', aliases: [], prefixes: ['/'], description: 'Repeats your text, mentioning you', priority: 0 }],
  });
}

/**
 * The npm package name of a new Node project: the plugin id's last part, with
 * "-plugin" added unless it already says so (`com.example.greeter` gives
 * `greeter-plugin`, `com.example.my-plugin` gives `my-plugin`).
 */
export function nodePackageName(pluginId: string): string {
  const last = pluginId.split('.').slice(-1)[0] ?? 'plugin';
  return /(^|[-_])plugin$/.test(last) ? last : `${last}-plugin`;
}

/**
 * The files of a new plugin project, by path: a pure function of the
 * options, so the tree is tested as data and written by the caller.
 */
export function projectFiles(o: InitOptions): Map<string, string> {
  const packageName = nodePackageName(o.pluginId);
  const files = new Map<string, string>();
  files.set(
    'package.json',
    json({
      name: packageName,
      version: '1.0.0',
      private: true,
      description: o.description,
      type: 'commonjs',
      main: 'dist/index.js',
      scripts: {
        build: 'tsc -p tsconfig.build.json',
        test: 'jest',
        validate: 'host-plugin validate',
        pack: 'npm run build && host-plugin pack',
        notes: 'host-plugin notes',
      },
      engines: { node: '>=20.11' },
      dependencies: { '@host/plugin-sdk-v2': o.sdk },
      devDependencies: {
        '@host/host-plugin': o.cli,
        '@swc/core': '^1.16.0',
        '@swc/jest': '^0.2.39',
        '@types/jest': '^30.0.0',
        '@types/node': '^20.19.0',
        jest: '^30.0.0',
        typescript: '~5.9.3',
      },
    }),
  );
  files.set(
    'manifest.json',
    richStarterManifest({
      ...o,
      sdkVersion: SDK_VERSION,
      start: { command: 'node', args: ['dist/index.js'] },
      schema: './node_modules/@host/plugin-sdk-v2/schema/manifest.schema.json',
    }),
  );
  files.set(
    'tsconfig.json',
    json({
      compilerOptions: {
        target: 'ES2022',
        module: 'node16',
        moduleResolution: 'node16',
        strict: true,
        esModuleInterop: true,
        skipLibCheck: true,
        sourceMap: true,
        outDir: 'dist',
        rootDir: 'src',
        types: ['node', 'jest'],
      },
      include: ['src'],
    }),
  );
  files.set(
    'tsconfig.build.json',
    json({ extends: './tsconfig.json', compilerOptions: { types: ['node'] }, exclude: ['src/**/*.spec.ts'] }),
  );
  files.set(
    'jest.config.js',
    `// Tests run on the TypeScript sources, compiled by SWC.\nmodule.exports = {\n  testEnvironment: 'node',\n  transform: { '^.+\\\\.ts$': ['@swc/jest'] },\n  testMatch: ['**/src/**/*.spec.ts'],\n};\n`,
  );
  files.set(
    'src/plugin.ts',
    `import { join } from 'node:path';
import { callbackButton, definePlugin, image, keyboard, literal, readManifest } from '@host/plugin-sdk-v2';

// Replace with a picture of your own: an http or https URL the platform can fetch (PNG or JPEG).
export const CAT_URL = '${STARTER_IMAGE_URL}';

/**
 * The plugin: one definition, run over stdio by src/index.ts (the packaged
 * entry) and driven in memory by the tests. manifest.json is read from the
 * project root, one folder up from both src/ and dist/.
 */
export default definePlugin({
  manifest: readManifest(join(__dirname, '..', 'manifest.json')),${
    o.intercepts
      ? `
  // Handlers may stop the plugins after this one (manifest: messages.intercept).
  intercepts: true,`
      : ''
  }
  commands: {
    // "/echo hello" -> a Markdown reply that mentions the sender (groups only;
    // Markdown is not available in one-to-one chats, so those get plain text).
    // literal() shows the user's text as written: Markdown in it (a link, an
    // image) is escaped instead of posted by the bot.
    async echo(ctx) {${
      o.intercepts
        ? `
      // Decide first: the host holds the event for lower-priority plugins until then.
      ctx.intercept();`
        : ''
    }
      const text = ctx.args || 'nothing';
      if (ctx.event.conversation.type === 'group') {
        await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' said: **', literal(text), '**');
      } else {
        await ctx.reply('You said: ', text);
      }
    },
    // "/cat" -> an image with a caption (QQ groups and one-to-one chats).
    async cat(ctx) {
      await ctx.reply('Here is a cat', image.fromUrl(CAT_URL, { alt: 'a cat' }));
    },
    // "/vote" -> a question with two buttons under it (Markdown: groups only).
    // A click comes back to onInteraction below with the button's data.
    async vote(ctx) {
      if (ctx.event.conversation.type !== 'group') return void (await ctx.reply('Votes work in groups.'));
      await ctx.replyMarkdown('**Do you like cats?**', keyboard().row(callbackButton('Yes', 'vote:yes', { style: 'primary' }), callbackButton('No', 'vote:no')));
    },
  },
  // A click on a callback button (manifest.json subscribes to "interaction.created").
  async onInteraction(ctx) {
    const data = ctx.interaction.data;
    if (data.startsWith('vote:')) await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' voted **', literal(data.slice('vote:'.length)), '**');
  },
});
`,
  );
  files.set(
    'src/index.ts',
    `// The entry the host starts (manifest.json: node dist/index.js --host-stdio).
import plugin from './plugin';

void plugin.main();
`,
  );
  files.set(
    'src/plugin.spec.ts',
    `import { createTestHost } from '@host/plugin-sdk-v2/testing';
import plugin, { CAT_URL } from './plugin';

describe('${o.name}', () => {
  it('replies in Markdown and mentions the sender in a group', async () => {
    const host = createTestHost(plugin);
    const { ack, replies } = await host.send({ text: '/echo hello', sender: { mentionId: 'user-1', displayName: 'Ann' } });
    expect(ack.accepted).toBe(true);${
      o.intercepts
        ? `
    expect(ack.intercepted).toBe(true);`
        : ''
    }
    expect(replies.map((r) => r.body)).toEqual([{ msg_type: 2, markdown: { content: '<qqbot-at-user id="user-1" /> said: **hello**' } }]);
  });

  it('shows Markdown from the user as text, not as a link or an image', async () => {
    const { replies } = await createTestHost(plugin).send({ text: '/echo [click](http://evil.example) ![img](x)', sender: { mentionId: 'user-1' } });
    expect(replies.map((r) => r.body)).toEqual([
      {
        msg_type: 2,
        markdown: { content: '<qqbot-at-user id="user-1" /> said: **\\\\[click\\\\]\\\\(http\\\\:\\\\/\\\\/evil\\\\.example\\\\) \\\\!\\\\[img\\\\]\\\\(x\\\\)**' },
      },
    ]);
  });

  it('replies in text in a one-to-one chat', async () => {
    const { replies } = await createTestHost(plugin).send({ text: '/echo <hi>', conversation: 'c2c' });
    expect(replies.map((r) => r.content)).toEqual(['You said: <\\u2060hi>']);
  });

  it('replies to /cat with an image', async () => {
    const { replies } = await createTestHost(plugin).send('/cat');
    expect(replies[0]!.body).toMatchObject({ msg_type: 7, media: { url: CAT_URL } });
  });

  it('asks with buttons and answers a click', async () => {
    const host = createTestHost(plugin);
    const asked = await host.send('/vote');
    const buttons = (asked.replies[0]!.body as { keyboard: { content: { rows: { buttons: { id: string; action: { data: string } }[] }[] } } })
      .keyboard.content.rows[0]!.buttons;
    expect(buttons.map((b) => b.action.data)).toEqual(['vote:yes', 'vote:no']);
    // The test host clicks the first button as the host delivers a click: interaction.created.
    const clicked = await host.click(buttons[0]!.action.data, { buttonId: buttons[0]!.id, senderId: 'user-1' });
    expect(clicked.ack.accepted).toBe(true);
    expect(clicked.replies.map((r) => r.body)).toEqual([{ msg_type: 2, markdown: { content: '<qqbot-at-user id="user-1" /> voted **yes**' } }]);
  });

  it('ignores messages that are not commands', async () => {
    const { ack, replies } = await createTestHost(plugin).send('just chatting');
    expect([ack.accepted, replies]).toEqual([false, []]);
  });
});
`,
  );
  files.set('.gitignore', 'node_modules/\ndist/\nartifacts/\n');
  files.set(
    'README.md',
    `# ${o.name}

${o.description}

A protocol v2 chat-bot plugin (stdio transport) built with \`@host/plugin-sdk-v2\`.

\`\`\`sh
npm install
npm test            # unit tests with the in-memory test host
npm run pack        # build, validate and write artifacts/${o.pluginId}.zip
npm run notes       # release notes from manifest.json
\`\`\`

Install: upload \`artifacts/${o.pluginId}.zip\` to the host (\`POST /api/plugins/packages\` with the file in the
field \`package\` and \`startAfterInstall=true\`), then send \`/echo hello\`, \`/cat\` (an image) or \`/vote\` (buttons; a click comes back to \`onInteraction\`) in a group (the host's console
provider: \`POST /api/console/messages\`).
`,
  );
  return files;
}
