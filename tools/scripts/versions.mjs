#!/usr/bin/env node
// The SDK version has one source, libs/protocol/src/versions.json ("sdkVersion"). Every other file that
// states it is listed in STAMPS below, with a pattern whose one group is the stated version. A release
// stamps the new version into all of them (`stamp`); the workspace check fails when any differs (`check`).
//
//   node tools/scripts/versions.mjs check [--root <dir>] [--json]
//   node tools/scripts/versions.mjs stamp <version> [--root <dir>] [--dry-run]
//
// Code that can read the source does so instead of being listed here: the Node SDK's SDK_VERSION (and with
// it the initialize answer, the HTTP manifest and the Node template of `host-plugin init`), the Python and
// Go templates of `host-plugin init`, the host's /api/health and `host-plugin notes`. The release archive
// names come from the Python and Go SDK constants listed here.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const VERSION_SOURCE = 'libs/protocol/src/versions.json';

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;
const jsonVersion = /^ {2}"version": "([^"]+)"/m;
const manifestSdkVersion = /"sdkVersion": "([^"]+)"/;

/**
 * Every file that states the SDK version, besides the source. Adding an SDK is one line here. A stamp
 * covers the first match of its pattern, or with `all: true` every match.
 */
export const STAMPS = [
  { file: 'libs/protocol/catalog/versions.json', what: 'catalogue copy for the SDK generators', pattern: /"sdkVersion": "([^"]+)"/ },
  { file: 'libs/plugin-sdk/package.json', what: 'Node SDK package version', pattern: jsonVersion },
  { file: 'tools/host-plugin/package.json', what: 'host-plugin CLI package version', pattern: jsonVersion },
  { file: 'examples/echo-plugin/package.json', what: 'Node example SDK dependency', pattern: /"@host\/plugin-sdk-v2": "\^([^"]+)"/ },
  { file: 'examples/echo-plugin/package.json', what: 'Node example CLI dependency', pattern: /"@host\/host-plugin": "\^([^"]+)"/ },
  { file: 'examples/echo-plugin/manifest.json', what: 'Node example manifest sdkVersion', pattern: manifestSdkVersion },
  { file: 'libs/plugin-sdk-python/package.json', what: 'Python SDK project version', pattern: jsonVersion },
  { file: 'libs/plugin-sdk-python/host_sdk_v2/_version.py', what: 'Python SDK_VERSION', pattern: /^SDK_VERSION = "([^"]+)"/m },
  { file: 'libs/plugin-sdk-python/samples/echo/manifest.json', what: 'Python sample manifest sdkVersion', pattern: manifestSdkVersion },
  {
    file: 'libs/plugin-sdk-python/README.md',
    what: 'Python README archive name',
    pattern: /SDK-V2-Python-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?=\.zip|\/)/,
    all: true,
  },
  { file: 'libs/plugin-sdk-python/README.md', what: 'Python README manifest sdkVersion', pattern: manifestSdkVersion },
  { file: 'libs/plugin-sdk-go/package.json', what: 'Go SDK project version', pattern: jsonVersion },
  { file: 'libs/plugin-sdk-go/hostsdk/plugin.go', what: 'Go SDKVersion', pattern: /^\tSDKVersion\s*= "([^"]+)"/m },
  { file: 'libs/plugin-sdk-go/samples/echo/manifest.json', what: 'Go sample manifest sdkVersion', pattern: manifestSdkVersion },
  {
    file: 'libs/plugin-sdk-go/README.md',
    what: 'Go README archive name',
    pattern: /SDK-V2-Go-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?=\.zip|\/|\s)/,
    all: true,
  },
  { file: 'libs/plugin-sdk-csharp/package.json', what: 'C# SDK project version', pattern: jsonVersion },
  { file: 'libs/plugin-sdk-csharp/src/HostSdk/HostSdk.csproj', what: 'C# SDK package version', pattern: /<Version>([^<]+)<\/Version>/ },
  { file: 'libs/plugin-sdk-csharp/src/HostSdk/Plugin.cs', what: 'C# SdkVersion', pattern: /public const string SdkVersion = "([^"]+)";/ },
  { file: 'libs/plugin-sdk-csharp/samples/Echo/manifest.json', what: 'C# sample manifest sdkVersion', pattern: manifestSdkVersion },
  {
    file: 'libs/plugin-sdk-csharp/src/HostSdk.AspNetCore/HostSdk.AspNetCore.csproj',
    what: 'C# ASP.NET Core package version',
    pattern: /<Version>([^<]+)<\/Version>/,
  },
  {
    file: 'e2e/runtime/bench/csharp-sdk-child/Bench.csproj',
    what: 'C# bench child HostSdk package version',
    pattern: /<PackageReference Include="HostSdk" Version="([^"]+)"/,
  },
  {
    file: 'libs/plugin-sdk-csharp/samples/Echo/Echo.csproj',
    what: 'C# sample HostSdk package version',
    pattern: /<PackageReference Include="HostSdk" Version="([^"]+)"/,
  },
];

/** The release archives a release run builds, named from the Python, Go and C# constants above. */
export const ARCHIVES = [
  { project: 'plugin-sdk-python', name: (v) => `SDK-V2-Python-${v}.zip`, dir: 'dist' },
  { project: 'plugin-sdk-go', name: (v) => `SDK-V2-Go-${v}.zip`, dir: 'dist' },
  { project: 'plugin-sdk-csharp', name: (v) => `SDK-V2-CSharp-${v}.zip`, dir: 'dist' },
];

export function readSourceVersion(root) {
  const source = JSON.parse(readFileSync(join(root, VERSION_SOURCE), 'utf8'));
  if (typeof source.sdkVersion !== 'string' || !SEMVER.test(source.sdkVersion))
    throw new Error(`${VERSION_SOURCE}: sdkVersion must be a semantic version, got ${JSON.stringify(source.sdkVersion)}`);
  return source.sdkVersion;
}

/** Each stamp with the version its file states (null when the pattern no longer matches). */
export function readStamps(root) {
  return STAMPS.map((s) => {
    const found = matches(s, readFileSync(join(root, s.file), 'utf8'));
    const values = [...new Set(found.map((m) => m.value))];
    return { file: s.file, what: s.what, stated: values.length ? values.join(', ') : null, places: found.length };
  });
}

/** Where a stamp's pattern finds the version in `text`: the first match, or every match for `all`. */
function matches(stamp, text) {
  const pattern = new RegExp(stamp.pattern.source, stamp.pattern.flags.replace(/[gd]/g, '') + 'dg');
  const found = [...text.matchAll(pattern)].map((m) => ({ start: m.indices[1][0], end: m.indices[1][1], value: m[1] }));
  return stamp.all ? found : found.slice(0, 1);
}

const LOCKFILE = 'package-lock.json';
const stampedManifests = () => [...new Set(STAMPS.map((s) => s.file).filter((f) => f.endsWith('/package.json')))];

/** What package-lock.json must record of a stamped package.json: its version and its @host/ dependency ranges. */
function lockFacts(manifest) {
  const pick = (deps = {}) => Object.fromEntries(Object.entries(deps).filter(([name]) => name.startsWith('@host/')));
  return { version: manifest.version, dependencies: pick(manifest.dependencies), devDependencies: pick(manifest.devDependencies) };
}

/** Differences between package-lock.json (when the root has one) and the stamped package.json files. */
function lockProblems(root) {
  if (!existsSync(join(root, LOCKFILE))) return [];
  const lock = JSON.parse(readFileSync(join(root, LOCKFILE), 'utf8'));
  return stampedManifests().flatMap((file) => {
    const dir = file.slice(0, -'/package.json'.length);
    const want = lockFacts(JSON.parse(readFileSync(join(root, file), 'utf8')));
    const have = lockFacts(lock.packages?.[dir] ?? {});
    return JSON.stringify(want) === JSON.stringify(have)
      ? []
      : [`${LOCKFILE}: the entry of ${dir} differs from ${file} (run the stamp again)`];
  });
}

/** Every disagreement with the source, as sentences; empty when all agree. */
export function checkVersions(root) {
  const expected = readSourceVersion(root);
  return [
    ...readStamps(root)
      .filter((s) => s.stated !== expected)
      .map((s) =>
        s.stated === null
          ? `${s.file}: the ${s.what} is no longer found (update its pattern in tools/scripts/versions.mjs)`
          : `${s.file}: the ${s.what} is ${s.stated}, ${VERSION_SOURCE} says ${expected}`,
      ),
    ...lockProblems(root),
  ];
}

/** Writes `version` into the source and every stamp; returns the files it changed (or would change). */
export function stampVersion(root, version, { dryRun = false } = {}) {
  if (!SEMVER.test(version)) throw new Error(`not a semantic version: ${version}`);
  const changed = [];
  const sourcePath = join(root, VERSION_SOURCE);
  const source = readFileSync(sourcePath, 'utf8');
  const nextSource = source.replace(/"sdkVersion": "[^"]+"/, `"sdkVersion": "${version}"`);
  if (nextSource !== source) {
    changed.push(VERSION_SOURCE);
    if (!dryRun) writeFileSync(sourcePath, nextSource);
  }
  for (const s of STAMPS) {
    const path = join(root, s.file);
    let text = readFileSync(path, 'utf8');
    const found = matches(s, text);
    if (!found.length) throw new Error(`${s.file}: the ${s.what} is not found (update its pattern in tools/scripts/versions.mjs)`);
    if (found.every((m) => m.value === version)) continue;
    if (!changed.includes(s.file)) changed.push(s.file);
    for (const m of found.reverse()) text = text.slice(0, m.start) + version + text.slice(m.end);
    if (!dryRun) writeFileSync(path, text);
  }
  // npm records each workspace's version and dependency ranges in the lockfile too.
  if (existsSync(join(root, LOCKFILE)) && (dryRun ? changed.length > 0 : lockProblems(root).length > 0)) {
    changed.push(LOCKFILE);
    if (!dryRun) {
      const lock = JSON.parse(readFileSync(join(root, LOCKFILE), 'utf8'));
      for (const file of stampedManifests()) {
        const entry = lock.packages[file.slice(0, -'/package.json'.length)];
        const facts = lockFacts(JSON.parse(readFileSync(join(root, file), 'utf8')));
        entry.version = facts.version;
        for (const kind of ['dependencies', 'devDependencies'])
          for (const [name, range] of Object.entries(facts[kind])) entry[kind][name] = range;
      }
      writeFileSync(join(root, LOCKFILE), JSON.stringify(lock, null, 2) + '\n');
    }
  }
  return changed;
}

function option(args, name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [command, ...args] = process.argv.slice(2);
  const root = option(args, '--root') ?? fileURLToPath(new URL('../..', import.meta.url));
  if (command === 'check') {
    const problems = checkVersions(root);
    if (args.includes('--json')) console.log(JSON.stringify({ version: readSourceVersion(root), stamps: readStamps(root), problems }));
    else if (problems.length) console.error(`SDK versions disagree:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    else console.log(`every stated SDK version is ${readSourceVersion(root)}`);
    process.exit(problems.length ? 1 : 0);
  } else if (command === 'stamp' && args[0] && !args[0].startsWith('--')) {
    const changed = stampVersion(root, args[0], { dryRun: args.includes('--dry-run') });
    console.log(`${args.includes('--dry-run') ? 'would stamp' : 'stamped'} ${args[0]} into ${changed.length} files`);
    for (const f of changed) console.log(`  ${f}`);
  } else {
    console.error('usage: versions.mjs check [--root <dir>] [--json] | stamp <version> [--root <dir>] [--dry-run]');
    process.exit(2);
  }
}
