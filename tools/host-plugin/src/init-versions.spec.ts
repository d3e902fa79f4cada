import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './cli';
import type { CliIO } from './io';

// Every language's template states the SDK version of the workspace's one version source (read here from
// the file itself, not through the constants the templates use).
const SOURCE = JSON.parse(readFileSync(join(__dirname, '../../../libs/protocol/src/versions.json'), 'utf8')) as { sdkVersion: string };

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'host-plugin-init-versions-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function io(cwd: string): CliIO & { lines: string[] } {
  const lines: string[] = [];
  return { cwd, lines, out: (t) => void lines.push(t), err: (t) => void lines.push(t), interactive: false, ask: async () => '' };
}

it.each(['node', 'python', 'go', 'csharp'])(
  'init --lang %s writes the SDK version of the version source into manifest.json',
  async (lang) => {
    const out = io(root);
    expect(await run(['init', `v-${lang}`, '--lang', lang, '--id', `com.example.v${lang}`, '--author', 'Me'], out)).toBe(0);
    const manifest = JSON.parse(readFileSync(join(root, `v-${lang}`, 'manifest.json'), 'utf8')) as { sdkVersion: string };
    expect(manifest.sdkVersion).toBe(SOURCE.sdkVersion);
  },
);
