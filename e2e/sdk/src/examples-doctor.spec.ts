import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// Every example plugin must pass the protocol conformance suite, as built and
// packed by the documented CLI: `host-plugin pack`, then `host-plugin doctor`;
// so must the e2e fixtures that claim to conform, and the C# SDK's sample as
// `dotnet publish` builds it.
const ROOT = resolve(__dirname, '../../..');
const CLI = join(ROOT, 'tools/host-plugin/dist/cli.cjs');
const EXAMPLES = [{ folder: 'examples/echo-plugin', pluginId: 'com.example.echo' }];

let out: string;
beforeAll(() => {
  for (const f of [CLI, join(ROOT, 'examples/echo-plugin/dist/index.js')])
    if (!existsSync(f)) throw new Error(`${f} is missing: run "npx nx run e2e-sdk:test", which builds it first`);
  out = mkdtempSync(join(tmpdir(), 'examples-doctor-'));
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

it.each(EXAMPLES)(
  '$folder passes host-plugin doctor',
  ({ folder, pluginId }) => {
    const pack = spawnSync(process.execPath, [CLI, 'pack', folder, '--out', out], { cwd: ROOT, encoding: 'utf8' });
    if (pack.status !== 0) throw new Error(`pack failed:\n${pack.stdout}\n${pack.stderr}`);
    const r = spawnSync(process.execPath, [CLI, 'doctor', join(out, `${pluginId}.zip`)], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`doctor failed:\n${r.stdout}\n${r.stderr}`);
    expect(r.stdout).toMatch(/^\d+ passed, 0 failed, \d+ skipped in [\d.]+ s: conforms$/m);
    expect(r.stdout).toMatch(/^ {2}pass {2}ping\.while-busy:/m);
  },
  120_000,
);

// The e2e fixture written against the wire format alone claims to follow the spec in its default mode.
it('e2e/test-fixtures/misbehaving-plugin in its echo mode passes host-plugin doctor', () => {
  const r = spawnSync(process.execPath, [CLI, 'doctor', 'e2e/test-fixtures/misbehaving-plugin'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`doctor failed:\n${r.stdout}\n${r.stderr}`);
  expect(r.stdout).toMatch(/^\d+ passed, 0 failed, \d+ skipped in [\d.]+ s: conforms$/m);
}, 120_000);

// The C# sample as its README builds it: `dotnet publish -c Release`, whose HostSdk targets (from the package in
// the local feed) write artifacts/Echo.zip.
it('the C# SDK sample, published with dotnet, passes host-plugin doctor', () => {
  const env = { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1' };
  const zip = join(out, 'Echo.zip');
  const build = spawnSync('dotnet', ['publish', 'samples/Echo', '-c', 'Release', `-p:HostPluginPackagePath=${zip}`], {
    cwd: join(ROOT, 'libs/plugin-sdk-csharp'),
    encoding: 'utf8',
    env,
  });
  if (build.status !== 0) throw new Error(`dotnet publish failed:\n${build.stdout}\n${build.stderr}`);
  const r = spawnSync(process.execPath, [CLI, 'doctor', zip], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`doctor failed:\n${r.stdout}\n${r.stderr}`);
  expect(r.stdout).toMatch(/^\d+ passed, 0 failed, \d+ skipped in [\d.]+ s: conforms$/m);
  expect(r.stdout).toMatch(/^ {2}pass {2}ping\.while-busy:/m);
  expect(r.stdout).toMatch(/^ {2}pass {2}stop\.graceful:/m);
}, 300_000);
