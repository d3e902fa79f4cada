#!/usr/bin/env node
// Builds dist/SDK-V2-CSharp-<version>.zip, the C# SDK as a release ships it:
//   node libs/plugin-sdk-csharp/scripts/release.mjs [--out <folder>]      (npx nx run plugin-sdk-csharp:release)
//
// SDK-V2-CSharp-<version>/
//   README.md                   how to use the archive, then the SDK's README
//   packages/                   HostSdk.<version>.nupkg and HostSdk.AspNetCore.<version>.nupkg: a local NuGet feed
//   buildTransitive/            HostSdk.targets, the packer targets (also inside HostSdk.nupkg, where they run from)
//   samples/Echo/               the sample plugin; `dotnet publish samples/Echo -c Release` writes its ZIP
//   src/                        the sources of HostSdk, HostSdk.Pack and HostSdk.AspNetCore
//   nuget.config, Directory.Build.props
//
// The version is the one of libs/protocol/src/versions.json (tools/scripts/versions.mjs stamps it into
// HostSdk.csproj); the packages are built with dotnet pack first. Entries are sorted and dated 1980-01-01.
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import AdmZip from 'adm-zip';
import { buildFeed, feedPackages, sdkDir, sdkVersion } from './dotnet.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--out');
const root = resolve(sdkDir, '..', '..');
const out = at >= 0 ? resolve(args[at + 1]) : join(root, 'dist');
const source = JSON.parse(readFileSync(join(root, 'libs/protocol/src/versions.json'), 'utf8')).sdkVersion;
const version = sdkVersion();
if (version !== source) {
  console.error(
    `HostSdk.csproj says ${version} but libs/protocol/src/versions.json says ${source}; run node tools/scripts/versions.mjs stamp ${source}`,
  );
  process.exit(1);
}
if (buildFeed() !== 0) {
  console.error('dotnet pack failed');
  process.exit(1);
}

const top = `SDK-V2-CSharp-${version}`;
const entries = new Map();
const add = (path, data) => entries.set(`${top}/${path}`, Buffer.isBuffer(data) ? data : Buffer.from(data));
const addFile = (path, file) => add(path, readFileSync(file));
function addTree(path, dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'bin' || name === 'obj' || name === 'artifacts') continue;
    const file = join(dir, name);
    if (statSync(file).isDirectory()) addTree(`${path}/${name}`, file);
    else addFile(`${path}/${name}`, file);
  }
}

const guide = `# C# SDK ${version} (HostSdk)

This archive holds the C# SDK of protocol v2 plugins for .NET 8 or newer:

- \`packages/\`: the NuGet packages \`HostSdk\` (the SDK, with the MSBuild targets that pack a plugin on
  \`dotnet publish -c Release\`) and \`HostSdk.AspNetCore\` (the HTTP transport on ASP.NET Core). Use the folder as a
  package source: \`nuget.config\` here does, so do the samples.
- \`samples/Echo/\`: a plugin. \`dotnet publish samples/Echo -c Release\` writes \`samples/Echo/artifacts/Echo.zip\`;
  upload it to the host, start it and send \`/echo hello\` in a group.
- \`buildTransitive/HostSdk.targets\`: the packaging targets as they are inside the package, to read.
- \`src/\`: the sources.

In your own project, add the folder as a source (\`dotnet nuget add source <path>/packages -n hostsdk\`, or a
nuget.config like the one here) and \`<PackageReference Include="HostSdk" Version="${version}" />\`; put
\`manifest.json\` beside the project file and publish in Release.

---

`;
// The README's links to files elsewhere in the host's repository, which the archive lacks, become text naming the
// file's path there.
const unlinked = readFileSync(join(sdkDir, 'README.md'), 'utf8').replace(
  /\[([^\]]+)\]\((\.\.\/[^)#\s]+)(#[^)\s]*)?\)/g,
  (_, text, target) => {
    const path = relative(root, resolve(sdkDir, target)).split('\\').join('/');
    return text === path ? `\`${path}\` in the host's repository` : `${text} (\`${path}\` in the host's repository)`;
  },
);
add('README.md', guide + unlinked);
for (const pkg of feedPackages()) addFile(`packages/${basename(pkg)}`, pkg);
addFile('buildTransitive/HostSdk.targets', join(sdkDir, 'src/HostSdk/buildTransitive/HostSdk.targets'));
addFile('Directory.Build.props', join(sdkDir, 'Directory.Build.props'));
add(
  'nuget.config',
  readFileSync(join(sdkDir, 'samples/nuget.config'), 'utf8')
    .replace('value="../artifacts/feed"', 'value="packages"')
    .replace('<packageSources>', '<packageSources>\n    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />')
    .replace(/<!--[^>]*-->/, '<!-- HostSdk from packages/ beside this file; everything else from NuGet. -->'),
);
for (const file of ['Program.cs', 'Echo.csproj', 'manifest.json']) addFile(`samples/Echo/${file}`, join(sdkDir, 'samples/Echo', file));
for (const project of ['HostSdk', 'HostSdk.Pack', 'HostSdk.AspNetCore']) addTree(`src/${project}`, join(sdkDir, 'src', project));
if (feedPackages().length < 2) {
  console.error(`expected HostSdk and HostSdk.AspNetCore ${version} in ${relative(root, join(sdkDir, 'artifacts/feed'))}`);
  process.exit(1);
}

// Every link of the README leads to a file of the archive or to a web page.
for (const [, link] of entries
  .get(`${top}/README.md`)
  .toString('utf8')
  .matchAll(/\]\(([^)\s]+)\)/g)) {
  const target = link.split('#')[0];
  if (
    target &&
    !/^https?:\/\//.test(target) &&
    ![...entries.keys()].some((k) => k === `${top}/${target}` || k.startsWith(`${top}/${target}/`))
  ) {
    console.error(`the README links to ${link}, which the archive lacks`);
    process.exit(1);
  }
}

const zip = new AdmZip();
const time = new Date(1980, 0, 1);
for (const path of [...entries.keys()].sort()) {
  zip.addFile(path, entries.get(path));
  zip.getEntry(path).header.time = time;
}
const file = join(out, `${top}.zip`);
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, zip.toBuffer());
console.log(`wrote ${relative(process.cwd(), file) || file} (${entries.size} files)`);
if (!existsSync(file)) process.exit(1);
// The NuGet packages also go beside the archive, as the release publishes them (`dotnet nuget push`).
for (const pkg of feedPackages()) {
  writeFileSync(join(out, basename(pkg)), readFileSync(pkg));
  console.log(`wrote ${relative(process.cwd(), join(out, basename(pkg)))}`);
}
