import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { formatBytes } from '@host/protocol';
import { packagePath } from '@host/protocol/node';
import { walkFiles, type PackFile } from './deps';
import { CliError, NODE_PACK_CODES, type CliErrorCode } from './errors';
import { isDirectory, isFile, type PluginProject } from './project';
import { checkProject, reportFindings } from './validate';
import { writeZip } from './zip';

export interface PackOptions {
  /** Folder of the ZIP (default `<project>/artifacts`). */
  outDir?: string;
  /** Extra files or folders to include (also `hostPlugin.include` in package.json). */
  include?: string[];
}

export interface PackResult {
  file: string;
  sha256: string;
  bytes: number;
  groups: { name: string; files: number; bytes: number }[];
  entries: string[];
}

function fileOf(project: PluginProject, path: string): PackFile {
  const source = join(project.dir, path);
  const stat = statSync(source);
  return { path, source, mode: stat.mode & 0o111 ? 0o755 : 0o644, size: stat.size };
}

/** A file or every file of a folder, by package-relative path. */
function collect(project: PluginProject, path: string, what: string): PackFile[] {
  const rel = packagePath(path);
  if (rel === undefined || rel === '')
    throw new CliError('PACK_INCLUDE_INVALID', `${what} "${path}" must be a file or folder inside the project`);
  const abs = join(project.dir, rel);
  if (isFile(abs)) return [fileOf(project, rel)];
  if (isDirectory(abs)) {
    const skipped: string[] = [];
    return walkFiles(abs, skipped)
      .filter((f) => !f.endsWith('.tsbuildinfo'))
      .map((f) => fileOf(project, `${rel}/${f}`));
  }
  throw new CliError('PACK_INCLUDE_INVALID', `${what} "${path}" does not exist in the project`);
}

function isNodePackCode(code: string): code is (typeof NODE_PACK_CODES)[number] {
  return (NODE_PACK_CODES as readonly string[]).includes(code);
}

/**
 * Builds `artifacts/<pluginId>.zip`: manifest.json, package.json, the folder
 * of the built entry, extra includes, and the production node_modules (the
 * SDK included), at the ZIP root. Refuses when validation finds an error, so
 * a source-only package or one without its dependencies is never written.
 */
export function pack(project: PluginProject, options: PackOptions, out: (text: string) => void): PackResult {
  const check = checkProject(project);
  const errors = check.findings.filter((f) => f.level === 'error');
  if (errors.length > 0 || !project.manifest || !check.packages || !check.entry || check.entry.kind === 'unknown') {
    out(`Refusing to pack ${project.dir}:`);
    reportFindings(check.findings, out);
    // The first problem's code (every packer reports a refusal by its code); a schema issue is PACK_MANIFEST_INVALID.
    const first = errors[0]?.code;
    const code: CliErrorCode = first === undefined || !isNodePackCode(first) ? 'PACK_MANIFEST_INVALID' : first;
    throw new CliError(
      code,
      `${errors.length} problem${errors.length === 1 ? '' : 's'} above, so no package was written`,
      errors.map((e) => e.code),
    );
  }
  reportFindings(check.findings, out);
  const manifest = project.manifest;
  const groups: { name: string; files: PackFile[] }[] = [];
  groups.push({ name: 'manifest.json', files: [fileOf(project, 'manifest.json')] });
  groups.push({ name: 'package.json', files: [fileOf(project, 'package.json')] });
  const entryDir = posix.dirname(check.entry.path);
  groups.push({
    name: entryDir === '.' ? `entry ${check.entry.path}` : `entry folder ${entryDir}/`,
    files: entryDir === '.' ? [fileOf(project, check.entry.path)] : collect(project, entryDir, 'entry folder'),
  });
  const workdir = packagePath(manifest.transport.stdio.workingDirectory) ?? '';
  if (workdir && !groups.some((g) => g.files.some((f) => f.path.startsWith(`${workdir}/`)))) {
    groups.push({ name: `working directory ${workdir}/`, files: collect(project, workdir, 'working directory') });
  }
  for (const include of [...(project.packageJson.hostPlugin?.include ?? []), ...(options.include ?? [])]) {
    groups.push({ name: `include ${include}`, files: collect(project, include, 'include') });
  }
  for (const p of check.packages)
    groups.push({ name: `${p.name}@${p.version}${p.linked ? ' (linked, published files)' : ''}`, files: p.files });

  // One entry per path: a file named twice (an include inside the entry folder) goes in once.
  const entries = new Map<string, PackFile>();
  for (const g of groups) for (const f of g.files) if (!entries.has(f.path)) entries.set(f.path, f);
  const zip = writeZip([...entries.values()].map((f) => ({ path: f.path, data: readFileSync(f.source), mode: f.mode })));
  const file = join(resolve(project.dir, options.outDir ?? 'artifacts'), `${manifest.pluginId}.zip`);
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, zip);
  } catch (error) {
    throw new CliError('PACK_OUTPUT_NOT_WRITABLE', `cannot write ${file}: ${(error as Error).message}`);
  }
  const sha256 = createHash('sha256').update(zip).digest('hex');

  const summary = groups.map((g) => ({ name: g.name, files: g.files.length, bytes: g.files.reduce((n, f) => n + f.size, 0) }));
  out(`Packed ${manifest.pluginId} ${manifest.version}:`);
  for (const g of summary)
    out(`  ${g.name.padEnd(56)} ${String(g.files).padStart(5)} file${g.files === 1 ? ' ' : 's'} ${formatBytes(g.bytes).padStart(10)}`);
  const raw = [...entries.values()].reduce((n, f) => n + f.size, 0);
  out(`  total: ${entries.size} files, ${formatBytes(raw)} unpacked, ${formatBytes(zip.length)} zipped`);
  out(`  ${file}`);
  out(`  sha256 ${sha256}`);
  out(
    `Install it: POST it to the host's admin API (curl -H "Authorization: Bearer $TOKEN" -F package=@<zip> -F startAfterInstall=true <host>/api/plugins/packages).`,
  );
  return { file, sha256, bytes: zip.length, groups: summary, entries: [...entries.keys()].sort() };
}
