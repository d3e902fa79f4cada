#!/usr/bin/env node
// The release run (docs/releasing.md): one version for the npm packages of the release group in nx.json
// (@host/plugin-sdk-v2, @host/host-plugin) and every SDK, from the pending version plans in .nx/version-plans/.
//
//   node tools/scripts/release.mjs --dry-run      what a release would do; writes nothing (CI runs it)
//   node tools/scripts/release.mjs                version, stamp, archives, changelogs, one commit and tag v<version>
//   node tools/scripts/release.mjs --publish      the same, then publishes the npm packages
//   node tools/scripts/release.mjs --publish-only publishes what the last release commit holds
//
// Steps: `nx release version` (from the version plans, current version read from disk), then the new version
// is stamped into the one version source and every file that states it (tools/scripts/versions.mjs), the SDK
// archives SDK-V2-Python-<version>.zip and SDK-V2-Go-<version>.zip are built, `nx release changelog` writes
// CHANGELOG.md files, commits everything and tags v<version>; only --publish runs `nx release publish`.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReleaseClient } from 'nx/release';
import { ARCHIVES, checkVersions, readSourceVersion, stampVersion } from './versions.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

// nx.json's "release" with its one "git" block (what `npx nx release` needs) split per step, as the steps run
// separately here: the version step only stages, the changelog step commits everything staged and tags.
const { git, ...release } = JSON.parse(readFileSync(new URL('../../nx.json', import.meta.url), 'utf8')).release;
const { releaseVersion, releaseChangelog, releasePublish } = new ReleaseClient(
  {
    ...release,
    version: { ...release.version, git: { commit: false, tag: false, stageChanges: true } },
    changelog: { ...release.changelog, git: { ...git, commit: true, tag: true } },
  },
  true,
);
const args = process.argv.slice(2);
const known = ['--dry-run', '--publish', '--publish-only', '--first-release', '--verbose'];
const unknown = args.filter((a) => !known.includes(a));
if (unknown.length) {
  console.error(
    `unknown option ${unknown.join(' ')}; usage: release.mjs [--dry-run] [--publish | --publish-only] [--first-release] [--verbose]`,
  );
  process.exit(2);
}
const dryRun = args.includes('--dry-run');
const firstRelease = args.includes('--first-release');
const verbose = args.includes('--verbose');

function run(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`${cmd} ${cmdArgs.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

/**
 * The C# SDK's NuGet packages that the release run wrote to dist/, pushed with `dotnet nuget push` to
 * NUGET_SOURCE (default nuget.org) with NUGET_API_KEY; without a key they are left for a manual push.
 */
function publishNuget() {
  const packages = existsSync(join(root, 'dist'))
    ? readdirSync(join(root, 'dist')).filter((f) => /^HostSdk(\.AspNetCore)?\.[0-9].*\.nupkg$/.test(f))
    : [];
  if (packages.length === 0) {
    console.error('no HostSdk .nupkg in dist/: run the release (it builds them) before publishing');
    return false;
  }
  const key = process.env['NUGET_API_KEY'];
  if (!key) {
    console.log(`NUGET_API_KEY is not set: push ${packages.map((p) => `dist/${p}`).join(' and ')} by hand.`);
    return true;
  }
  const source = process.env['NUGET_SOURCE'] ?? 'https://api.nuget.org/v3/index.json';
  for (const pkg of packages) {
    if (dryRun) {
      console.log(`would run: dotnet nuget push dist/${pkg} --source ${source}`);
      continue;
    }
    const pushArgs = ['nuget', 'push', join('dist', pkg), '--source', source, '--api-key', key, '--skip-duplicate'];
    const r = spawnSync('dotnet', pushArgs, { cwd: root, stdio: 'inherit' });
    // The message leaves out the arguments: they hold the key.
    if (r.status !== 0) throw new Error(`dotnet nuget push dist/${pkg} failed (exit ${r.status ?? r.signal})`);
  }
  return true;
}

async function publish() {
  const results = await releasePublish({ dryRun, firstRelease, verbose });
  return Object.values(results).every((p) => p.code === 0) && publishNuget();
}

async function main() {
  const problems = checkVersions(root);
  if (problems.length) throw new Error(`SDK versions disagree before the release:\n  ${problems.join('\n  ')}`);
  if (args.includes('--publish-only')) return (await publish()) ? 0 : 1;

  const current = readSourceVersion(root);
  const { workspaceVersion, projectsVersionData, releaseGraph } = await releaseVersion({
    dryRun,
    firstRelease,
    verbose,
  });
  if (!workspaceVersion) {
    console.log('\nNo version plan is pending: nothing to release. Add one with `npx nx release plan`.');
    return 0;
  }

  console.log(`\nSDK version ${current} -> ${workspaceVersion}`);
  const stamped = stampVersion(root, workspaceVersion, { dryRun });
  console.log(`${dryRun ? 'Would stamp' : 'Stamped'} ${workspaceVersion} into:\n${stamped.map((f) => `  ${f}`).join('\n')}`);
  const names = ARCHIVES.map((a) => `${a.dir}/${a.name(workspaceVersion)}`);
  if (dryRun) console.log(`Would build the SDK archives:\n${names.map((n) => `  ${n}`).join('\n')}`);
  else {
    run('git', ['add', '--', ...stamped]);
    run('npx', ['nx', 'run-many', '-t', 'release', '-p', ...ARCHIVES.map((a) => a.project), '--parallel=1', '--skipNxCache']);
    console.log(`Built the SDK archives:\n${names.map((n) => `  ${n}`).join('\n')}`);
  }

  await releaseChangelog({
    versionData: projectsVersionData,
    version: workspaceVersion,
    releaseGraph,
    dryRun,
    firstRelease,
    verbose,
  });
  if (args.includes('--publish') && !(await publish())) return 1;
  if (!dryRun && !args.includes('--publish'))
    console.log(
      `\nReleased v${workspaceVersion} locally. Push the commit and tag, then publish: node tools/scripts/release.mjs --publish-only`,
    );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
