import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  confirmUpdate,
  dotnetEnv,
  expectDoctorPasses,
  expectMarkdownReply,
  installAndStart,
  listeningUrl,
  replaceWithHttp,
  ROOT,
  runToolAsync,
  say,
  startHost,
  type RunningHost,
} from '@host/e2e-support';

// What a new C# plugin author does, against the real built host process:
// `host-plugin init --lang csharp`, the project's own `dotnet test`,
// `dotnet publish -c Release` (the HostSdk package's MSBuild targets write the
// ZIP), upload through the admin API, a console message answered in Markdown
// with a real mention; an update packed with `host-plugin pack` and confirmed
// by the operator; then the same plugin class served over HTTP by ASP.NET Core
// (HostSdk.AspNetCore) and registered by URL.
const CLI = join(ROOT, 'tools/host-plugin/dist/cli.cjs');
const ID = 'com.example.csecho';
const ASSEMBLY = 'Csecho';
const children: ChildProcess[] = [];
let work: string;
let project: string;
let host: RunningHost;

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: dotnetEnv() });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

/** The same, without blocking the event loop (see runToolAsync). */
const runAsync = (cmd: string, args: string[], cwd: string) => runToolAsync(cmd, args, cwd, dotnetEnv());

const artifact = () => join(project, 'artifacts', `${ASSEMBLY}.zip`);

beforeAll(async () => {
  for (const f of [CLI, join(ROOT, 'dist/apps/host/main.cjs')]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run "npx nx run e2e-sdk-csharp:test", which builds it first`);
  }
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  work = mkdtempSync(join(ROOT, 'tmp', 'e2e-sdk-csharp-'));
  project = join(work, 'csecho');
  host = await startHost(join(work, 'data'));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await host?.stop();
  rmSync(work, { recursive: true, force: true });
});

it('init --lang csharp gives a project whose tests pass and that dotnet publish -c Release packs', () => {
  expect(
    run(process.execPath, [CLI, 'init', 'csecho', '--lang', 'csharp', '--id', ID, '--name', 'C# Echo', '--author', 'Tests'], work),
  ).toMatch(/Created com\.example\.csecho/);
  expect(run('dotnet', ['test', `tests/${ASSEMBLY}.Tests`], project)).toMatch(/Passed!\s+- Failed:\s+0, Passed:\s+6\b/);
  expect(run('dotnet', ['publish', '-c', 'Release'], project)).toMatch(/Packed com\.example\.csecho/);
  expect(existsSync(artifact())).toBe(true);
});

it('the published plugin passes host-plugin doctor (the conformance suite)', () => {
  expectDoctorPasses(CLI, artifact(), project);
});

it('installs through the admin API, starts and replies in Markdown mentioning the sender', async () => {
  await installAndStart(host, readFileSync(artifact()), ID);
  expectMarkdownReply(await say(host, '/echo <i>hello</i>'), ID, '<qqbot-at-user id="author-1" /> said: **\\<i\\>hello\\<\\/i\\>**');
});

it('updates to a new version, packed with host-plugin pack, through the confirmation flow', async () => {
  const manifestPath = join(project, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  writeFileSync(manifestPath, JSON.stringify({ ...manifest, version: '1.1.0' }, null, 2));
  const source = join(project, 'EchoPlugin.cs');
  writeFileSync(source, readFileSync(source, 'utf8').replace('" said: **"', '" says: **"'));
  expect(await runAsync(process.execPath, [CLI, 'pack'], project)).toMatch(/Packed com\.example\.csecho/);

  await confirmUpdate(host, readFileSync(artifact()), ID, '1.1.0');
  expectMarkdownReply(await say(host, '/echo again'), ID, '<qqbot-at-user id="author-1" /> says: **again**');
});

it('serves the same plugin over HTTP with ASP.NET Core, registered by base URL, taking the secret from a file without a restart', async () => {
  // A second project beside the plugin: it references the plugin project and HostSdk.AspNetCore (from the
  // plugin's local feed), and serves EchoPlugin.Create() with HostPluginHttpHost.
  const http = join(work, 'csecho-http');
  mkdirSync(http);
  writeFileSync(
    join(http, 'CsechoHttp.csproj'),
    `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net8.0</TargetFramework>
    <RollForward>Major</RollForward>
    <Nullable>enable</Nullable>
    <ImplicitUsings>enable</ImplicitUsings>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="HostSdk.AspNetCore" Version="${manifestSdkVersion()}" />
    <ProjectReference Include="../csecho/${ASSEMBLY}.csproj" />
  </ItemGroup>
</Project>
`,
  );
  writeFileSync(
    join(http, 'Program.cs'),
    `using HostSdk.AspNetCore;
using HostSdk.Http;

return await HostPluginHttpHost.RunAsync(${ASSEMBLY}.EchoPlugin.Create(), args, new HttpPluginOptions { ManifestPath = "../csecho/manifest.json" });
`,
  );
  writeFileSync(
    join(http, 'nuget.config'),
    readFileSync(join(project, 'nuget.config'), 'utf8').replace('value="packages"', 'value="../csecho/packages"'),
  );
  await runAsync('dotnet', ['build', '-c', 'Release', '-o', 'out'], http);

  const child = spawn('dotnet', ['out/CsechoHttp.dll', '--http', '127.0.0.1:0', '--secret-file', 'signing-secret.txt'], {
    cwd: http,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: dotnetEnv(),
  });
  children.push(child);
  const baseUrl = await listeningUrl(child, 'the HTTP plugin');
  writeFileSync(join(http, 'signing-secret.txt'), `${await replaceWithHttp(host, ID, baseUrl)}\n`);
  expectMarkdownReply(await say(host, '/echo over http'), ID, '<qqbot-at-user id="author-1" /> says: **over http**', false);
});

function manifestSdkVersion(): string {
  return (JSON.parse(readFileSync(join(project, 'manifest.json'), 'utf8')) as { sdkVersion: string }).sdkVersion;
}
