import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERMISSIONS, RELEASE_VERSIONS } from '@host/protocol';
import { cli } from './cli.spec-helper';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'host-plugin-notes-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      pluginId: 'com.example.weather',
      name: 'Weather',
      version: '1.4.0',
      author: 'Acme',
      description: 'Weather reports.',
      protocolVersion: 2,
      sdkVersion: '2.0.0',
      transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['dist/index.js', '--host-stdio'] } },
      eventSubscriptions: [{ eventType: 'message.created' }],
      permissions: ['messages.reply', 'messages.send'],
      commands: [{ name: 'weather', aliases: ['w'], description: 'Weather for a city' }],
      concurrency: { maxConcurrentEvents: 4 },
      settings: {
        configSchema: {
          apiKey: { type: 'secret', label: 'API key', required: true, description: 'From the weather service' },
          units: { type: 'select', label: 'Units', options: [{ value: 'metric' }, { value: 'imperial' }], defaultValue: 'metric' },
        },
      },
    }),
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'weather', engines: { node: '>=20.11' } }));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const read = (file = 'RELEASE_NOTES.md') => readFileSync(join(dir, file), 'utf8');

describe('host-plugin notes', () => {
  it('covers every item the contract asks a stdio publisher to state', async () => {
    writeFileSync(
      join(dir, 'notes.json'),
      JSON.stringify({
        permissions: { 'messages.send': 'Posts the morning forecast to the groups you configure.' },
        changes: 'Added imperial units.',
      }),
    );
    const r = await cli(dir, ['notes', '--host-versions', '>=1.0 <2']);
    expect(r.code).toBe(0);
    const md = read();
    expect(md).toMatch(/^# Weather 1\.4\.0/);
    expect(md).toMatch(/Supported host versions: >=1\.0 <2/);
    expect(md).toMatch(/\| `messages\.reply` \| Reply to the messages the plugin receives\. \|/);
    expect(md).toContain(PERMISSIONS['messages.reply']);
    expect(md).toMatch(/\| `messages\.send` \| Posts the morning forecast/);
    expect(md).toMatch(/Required runtime: Node\.js >=20\.11 on the host machine/);
    expect(md).toMatch(/\| `apiKey` \(API key\) \| secret \| yes \| \(secret\) \| From the weather service \|/);
    expect(md).toMatch(/\| `units` \(Units\) \| select: metric, imperial \| no \| `metric` \|/);
    expect(md).toMatch(/## Common errors and logs/);
    expect(md).toMatch(/<data>\/logs\/com\.example\.weather\//);
    expect(md).toMatch(/Transport: `stdio-jsonrpc`/);
    expect(md).toMatch(/upload `com\.example\.weather\.zip` to the host's admin API/);
    expect(md).toMatch(/Concurrency: 4 event\(s\) at a time, up to 1000 waiting/);
    expect(md).toMatch(/## What's new\n\n- Added imperial units\./);
    expect(md).toMatch(/\| \/weather \| w \| Weather for a city \|/);
  });

  it('states the host versions of the one version source unless the plugin narrows them', async () => {
    const r = await cli(dir, ['notes', '--stdout']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Supported host versions: ${RELEASE_VERSIONS.hostVersions}\n`);
    writeFileSync(join(dir, 'notes.json'), JSON.stringify({ hostVersions: '>=0.2.0 <1.0.0' }));
    expect((await cli(dir, ['notes', '--stdout'])).out).toContain('Supported host versions: >=0.2.0 <1.0.0\n');
  });

  it('names the flag for each missing fact when nobody can be asked', async () => {
    const r = await cli(dir, ['notes', '--http']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/error NOTES_INPUT_MISSING/);
    expect(r.err).toMatch(/pass --base-url or set "http\.baseUrl" in notes\.json/);
    expect(r.err).not.toMatch(/host-versions/);
  });

  it('asks on a terminal for what it cannot know', async () => {
    const answers = ['https://bots.example.com/w', 'TLS at nginx', '4 at once', 'journald', 'blue-green'];
    const r = await cli(dir, ['notes', '--http', '--stdout'], answers);
    expect(r.asked).toEqual([
      'Base URL users register (https://...): ',
      'HTTPS, reverse proxy and authentication requirements: ',
      'How many events the service handles at once, and what happens beyond that: ',
      'Where the service writes its logs: ',
      'How updates roll out, how to roll back, and availability (uptime, maintenance windows): ',
    ]);
    expect(r.out).toMatch(/https:\/\/bots\.example\.com\/w/);
  });

  it('adds the service facts for an HTTP plugin', async () => {
    writeFileSync(
      join(dir, 'notes.json'),
      JSON.stringify({
        transport: 'http',
        hostVersions: '>=1.0',
        http: {
          baseUrl: 'https://bots.example.com/weather',
          security: 'TLS terminates at nginx; only the host IP range is allowed.',
          concurrency: '16 events at once per instance; 503 beyond that.',
          logs: 'journald, unit weather-plugin.',
          updates: 'Blue-green deploys; roll back by switching the upstream; 99.9% target.',
        },
      }),
    );
    const r = await cli(dir, ['notes', '--out', 'NOTES.md']);
    expect(r.code).toBe(0);
    const md = read('NOTES.md');
    for (const expected of [
      /Transport: HTTP/,
      /register the base URL `https:\/\/bots\.example\.com\/weather` with the host/,
      /Service address: `https:\/\/bots\.example\.com\/weather`\. The host must reach/,
      /HTTPS, proxy and authentication: TLS terminates at nginx/,
      /Timeouts: The host waits up to 10 s/,
      /Concurrency: 16 events at once/,
      /Retries: The host retries a delivery up to 2 times/,
      /Logs: journald/,
      /Health check: GET https:\/\/bots\.example\.com\/weather\/host\/plugin\/manifest/,
      /Updates, rollback and availability: Blue-green/,
      /Required runtime: Node\.js >=20\.11 on the machine that runs the service/,
    ]) {
      expect(md).toMatch(expected);
    }
  });

  it('refuses a notes.json with an unknown field', async () => {
    writeFileSync(join(dir, 'notes.json'), JSON.stringify({ hostVersion: '1' }));
    const r = await cli(dir, ['notes']);
    expect(r.err).toMatch(/error NOTES_INPUT_INVALID/);
  });

  it('names the runtime and SDK of a Python, Go or C# plugin, not Node.js', async () => {
    const manifest = JSON.parse(read('manifest.json'));
    rmSync(join(dir, 'package.json'));
    const withCommand = (command: string, args: string[], extra: object = {}) =>
      writeFileSync(
        join(dir, 'manifest.json'),
        JSON.stringify({ ...manifest, ...extra, transport: { type: 'stdio-jsonrpc', stdio: { command, args } } }),
      );

    withCommand('python3', ['plugin.py', '--host-stdio']);
    let out = (await cli(dir, ['notes', '--stdout'])).out;
    expect(out).toContain('built with host_sdk_v2 (Python) 2.0.0');
    expect(out).toContain('Required runtime: Python 3.9 or newer on the host machine (the host runs `python3`)');
    expect(out).toContain('so `python3` is on its PATH');
    expect(out).not.toMatch(/Node\.js|node_modules|plugin-sdk-v2/);

    writeFileSync(join(dir, 'go.mod'), 'module com.example.weather\n');
    withCommand('./weather', ['--host-stdio'], { supportedPlatforms: [{ platform: 'linux', architectures: ['x64'] }] });
    out = (await cli(dir, ['notes', '--stdout'])).out;
    expect(out).toContain('built with hostsdk (Go) 2.0.0');
    expect(out).toContain('Required runtime: none: the package holds a compiled executable (linux x64)');
    expect(out).toContain('upload `com.example.weather-<goos>-<goarch>.zip`');
    expect(out).not.toContain('Node.js');

    rmSync(join(dir, 'go.mod'));
    withCommand('dotnet', ['Weather.dll', '--host-stdio']);
    out = (await cli(dir, ['notes', '--stdout'])).out;
    expect(out).toContain('built with HostSdk (C#) 2.0.0');
    expect(out).toContain('Required runtime: .NET 8 runtime or newer on the host machine (the host runs `dotnet`)');
  });
});
