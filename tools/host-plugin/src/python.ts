import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RELEASE_VERSIONS } from '@host/protocol';
import { CliError } from './errors';
import { richStarterManifest, STARTER_IMAGE_URL } from './starter-rich';

/**
 * Python plugin projects: `init --lang python` writes one, and `pack` inside
 * one runs the Python SDK's own packer (`python3 -m host_sdk_v2.pack`), so
 * the Node CLI and the Python command give the same ZIP. The project carries
 * a copy of host_sdk_v2 (standard library only), so its tests and the packer
 * run with nothing but Python installed.
 */

/** The SDK version the Python templates name, from the one version source; the SDK's own SDK_VERSION (generated from the same source) says the same (a test checks). */
export const PYTHON_SDK_VERSION: string = RELEASE_VERSIONS.sdkVersion;

export interface PythonInitOptions {
  pluginId: string;
  name: string;
  author: string;
  description: string;
}

/** The files of a new Python plugin project, by path (the SDK copy is added by copyPythonSdk). */
export function pythonProjectFiles(o: PythonInitOptions): Map<string, string> {
  const files = new Map<string, string>();
  files.set(
    'manifest.json',
    richStarterManifest({ ...o, sdkVersion: PYTHON_SDK_VERSION, start: { command: 'python3', args: ['plugin.py'] } }),
  );
  files.set(
    'plugin.py',
    `"""${o.name}: a protocol v2 chat-bot plugin."""

from host_sdk_v2 import Plugin, at, callback_button, image_from_url, keyboard, literal

plugin = Plugin.from_manifest("manifest.json")

# Replace with a picture of your own: an http or https URL the platform can fetch (PNG or JPEG).
CAT_URL = "${STARTER_IMAGE_URL}"


@plugin.command("echo")
def echo(ctx):
    # "/echo hello" -> a Markdown reply that mentions the sender (groups only;
    # one-to-one chats get plain text). literal() shows the user's text as
    # written: Markdown in it (a link, an image) is escaped, not posted.
    text = ctx.args or "nothing"
    if ctx.event["conversation"]["type"] == "group":
        ctx.reply_markdown(at.user(ctx.sender), " said: **", literal(text), "**")
    else:
        ctx.reply("You said: ", text)


@plugin.command("cat")
def cat(ctx):
    # "/cat" -> an image with a caption (QQ groups and one-to-one chats).
    ctx.reply("Here is a cat", image_from_url(CAT_URL, alt="a cat"))


@plugin.command("vote")
def vote(ctx):
    # "/vote" -> a question with two buttons under it (Markdown: groups only).
    # A click comes back to on_interaction below with the button's data.
    if ctx.event["conversation"]["type"] != "group":
        ctx.reply("Votes work in groups.")
        return
    buttons = keyboard([callback_button("Yes", "vote:yes", primary=True), callback_button("No", "vote:no")])
    ctx.reply_markdown("**Do you like cats?**", keyboard=buttons)


@plugin.on_interaction
def clicked(ctx):
    # A click on a callback button (manifest.json subscribes to "interaction.created").
    if ctx.data.startswith("vote:"):
        ctx.reply_markdown(at.user(ctx.sender), " voted **", literal(ctx.data[len("vote:"):]), "**")


if __name__ == "__main__":
    plugin.run()
`,
  );
  files.set('tests/__init__.py', '');
  files.set(
    'tests/test_plugin.py',
    `import os
import unittest

from host_sdk_v2.testing import TestHost

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plugin import CAT_URL, plugin  # noqa: E402


class EchoTest(unittest.TestCase):
    def test_echo_mentions_the_sender_in_markdown(self):
        delivery = TestHost(plugin).send("/echo hello")
        self.assertTrue(delivery.ack["accepted"])
        assert delivery.completion is not None
        self.assertIsNone(delivery.completion["error"])
        self.assertEqual(
            delivery.replies[0].body,
            {"msg_type": 2, "markdown": {"content": '<qqbot-at-user id="user-1" /> said: **hello**'}},
        )

    def test_user_markdown_is_shown_as_written(self):
        delivery = TestHost(plugin).send("/echo [x](http://e.example)")
        self.assertIn("\\\\[x\\\\]", delivery.replies[0].body["markdown"]["content"])

    def test_one_to_one_chats_get_text(self):
        delivery = TestHost(plugin).send("/echo hi", conversation="c2c")
        self.assertEqual(delivery.replies[0].body, {"msg_type": 0, "content": "You said: hi"})

    def test_cat_replies_with_an_image(self):
        delivery = TestHost(plugin).send("/cat")
        body = delivery.replies[0].body
        self.assertEqual(body["msg_type"], 7)  # a media message: QQ Bot fetches the URL
        self.assertEqual(body["media"]["url"], CAT_URL)

    def test_a_vote_button_click_is_answered(self):
        host = TestHost(plugin)
        asked = host.send("/vote")
        buttons = asked.replies[0].body["keyboard"]["content"]["rows"][0]["buttons"]
        self.assertEqual([b["action"]["data"] for b in buttons], ["vote:yes", "vote:no"])
        # The test host clicks the first button as the host delivers a click: interaction.created.
        clicked = host.click(buttons[0]["action"]["data"], button_id=buttons[0]["id"])
        self.assertTrue(clicked.ack["accepted"])
        self.assertEqual(
            clicked.replies[0].body,
            {"msg_type": 2, "markdown": {"content": '<qqbot-at-user id="user-1" /> voted **yes**'}},
        )


if __name__ == "__main__":
    unittest.main()
`,
  );
  files.set('requirements.txt', '# Third-party packages the plugin imports, one per line; the packer installs them into the ZIP.\n');
  files.set('.gitignore', 'artifacts/\n__pycache__/\n*.pyc\n');
  files.set(
    'README.md',
    `# ${o.name}

A protocol v2 plugin (\`${o.pluginId}\`) written with the Python SDK \`host_sdk_v2\` (a copy is in
\`host_sdk_v2/\`; standard library only, Python 3.9+).

\`\`\`sh
python3 -m unittest                 # tests with the SDK's in-memory test host
python3 -m host_sdk_v2.pack         # writes artifacts/${o.pluginId}.zip (or: host-plugin pack)
python3 plugin.py                   # without --host-stdio it only prints help
\`\`\`

Upload \`artifacts/${o.pluginId}.zip\` to the host (\`POST /api/plugins/packages\`), start it, and send
\`/echo hello\`, \`/cat\` (an image) or \`/vote\` (buttons; a click comes back to \`on_interaction\`) in a group. Dependencies go in \`requirements.txt\`; the packer installs them into the ZIP.
The SDK guide is \`host_sdk_v2\`'s README in the SDK release archive.

To use an installed SDK instead of the copy: install the distribution \`host-sdk-v2\` into a virtual
environment (offline from the release archive: \`python -m pip install --no-index --find-links
<archive>/packages host-sdk-v2\`) and delete \`host_sdk_v2/\` here, which would shadow it. The packer copies
the installed SDK into the ZIP the same way.
`,
  );
  return files;
}

/**
 * The host_sdk_v2 package to copy into new projects: the one beside this CLI
 * in a checkout of the host repository (libs/plugin-sdk-python), or the copy
 * the build puts into dist/sdk/python, which the published package carries.
 */
export function pythonSdkSource(cliDir: string = __dirname): string {
  const candidates = [
    resolve(cliDir, '..', '..', '..', 'libs', 'plugin-sdk-python', 'host_sdk_v2'),
    resolve(cliDir, 'sdk', 'python', 'host_sdk_v2'),
  ];
  const found = candidates.find((dir) => existsSync(join(dir, '__init__.py')));
  if (!found) throw new CliError('PYTHON_SDK_MISSING', `looked in ${candidates.join(', ')}`);
  return found;
}

/** Copies host_sdk_v2 (without bytecode) into the project. */
export function copyPythonSdk(target: string, source: string = pythonSdkSource()): void {
  cpSync(source, join(target, 'host_sdk_v2'), {
    recursive: true,
    filter: (path) => !path.includes('__pycache__') && !path.endsWith('.pyc'),
  });
}

/** True when manifest.json starts a Python interpreter: `pack` then belongs to the Python packer. */
export function isPythonProject(dir: string): boolean {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8').replace(/^\uFEFF/, '')) as {
      transport?: { stdio?: { command?: unknown } };
    };
    const command = manifest.transport?.stdio?.command;
    return typeof command === 'string' && /^(?:.*[\\/])?python(?:3(?:\.\d+)?)?(?:\.exe)?$/i.test(command);
  } catch {
    return false;
  }
}

/**
 * Runs the Python packer in `dir` and returns its exit code; its output goes
 * straight to the terminal. `python` is the interpreter (default python3, or
 * HOST_PLUGIN_PYTHON).
 */
export function packPython(dir: string, outDir: string | undefined, python = process.env['HOST_PLUGIN_PYTHON'] ?? 'python3'): number {
  const args = ['-m', 'host_sdk_v2.pack', '.', ...(outDir ? ['--out', outDir] : [])];
  const result = spawnSync(python, args, { cwd: dir, stdio: 'inherit', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  if (result.error) throw new CliError('PYTHON_NOT_FOUND', `${python} could not be started: ${result.error.message}`);
  return result.status ?? 1;
}

/**
 * `host-plugin validate` in a Python project: the Python packer's `--check`
 * (manifest.json against the protocol schema and the start command; writes
 * nothing). Its report goes to `out` and `err`; returns its exit code.
 */
export function validatePython(
  dir: string,
  out: (text: string) => void,
  err: (text: string) => void,
  python = process.env['HOST_PLUGIN_PYTHON'] ?? 'python3',
): number {
  const result = spawnSync(python, ['-m', 'host_sdk_v2.pack', '.', '--check'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (result.error) throw new CliError('PYTHON_NOT_FOUND', `${python} could not be started: ${result.error.message}`);
  for (const line of result.stdout.split('\n').filter(Boolean)) out(line);
  for (const line of result.stderr.split('\n').filter(Boolean)) err(line);
  return result.status ?? 1;
}
