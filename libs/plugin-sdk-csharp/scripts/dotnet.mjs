// Shared by the C# SDK's scripts: the dotnet environment and the local package feed.
//   node libs/plugin-sdk-csharp/scripts/dotnet.mjs feed     builds artifacts/feed/*.nupkg (dotnet pack)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export const sdkDir = join(dirname(new URL(import.meta.url).pathname), '..');
export const feedDir = join(sdkDir, 'artifacts', 'feed');
/** The projects the feed holds, by package id. */
export const PACKAGES = [
  { id: 'HostSdk', project: 'src/HostSdk' },
  { id: 'HostSdk.AspNetCore', project: 'src/HostSdk.AspNetCore' },
];

export function dotnetEnv(extra = {}) {
  return { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1', ...extra };
}

/** The SDK version, from HostSdk.csproj (tools/scripts/versions.mjs stamps it). */
export function sdkVersion() {
  const csproj = readFileSync(join(sdkDir, 'src/HostSdk/HostSdk.csproj'), 'utf8');
  const m = /<Version>([^<]+)<\/Version>/.exec(csproj);
  if (!m) throw new Error('src/HostSdk/HostSdk.csproj has no <Version>');
  return m[1];
}

/** NuGet's global packages folder, where a restore extracts packages (and keeps them by version). */
export function globalPackagesFolder() {
  return process.env.NUGET_PACKAGES || join(homedir(), '.nuget', 'packages');
}

/**
 * Packs the SDK packages into artifacts/feed and forgets the extracted copies of this version in the global
 * packages folder: a rebuilt package keeps its version, and restore would otherwise go on using the old copy.
 * Returns the dotnet exit code (output inherited).
 */
export function buildFeed({ stdio = 'inherit' } = {}) {
  const version = sdkVersion();
  for (const p of PACKAGES) {
    if (!existsSync(join(sdkDir, p.project))) continue;
    const r = spawnSync('dotnet', ['pack', p.project, '-c', 'Release', '-o', feedDir, '--nologo'], {
      cwd: sdkDir,
      env: dotnetEnv(),
      stdio,
    });
    if (r.error) throw new Error(`cannot run dotnet (${r.error.message}); install the .NET SDK and put dotnet on PATH`);
    if (r.status !== 0) return r.status ?? 1;
    rmSync(join(globalPackagesFolder(), p.id.toLowerCase(), version), { recursive: true, force: true });
  }
  return 0;
}

/** The .nupkg files of this version in the feed. */
export function feedPackages() {
  const version = sdkVersion();
  return existsSync(feedDir)
    ? readdirSync(feedDir)
        .filter((f) => f.endsWith(`.${version}.nupkg`))
        .map((f) => join(feedDir, f))
    : [];
}

if (process.argv[1] === new URL(import.meta.url).pathname && process.argv[2] === 'feed') {
  process.exit(buildFeed());
}
