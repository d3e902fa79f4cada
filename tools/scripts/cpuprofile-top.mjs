#!/usr/bin/env node
// The heaviest functions of V8 CPU profiles (`node --cpu-prof`), by self time,
// and the same time grouped by module, for a benchmark's README:
//
//   node tools/scripts/cpuprofile-top.mjs <file.cpuprofile | folder> [--top=15]
//
// A folder prints each .cpuprofile in it (a host writes one per thread: the
// main thread, and the embedded database's worker).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

const args = process.argv.slice(2);
const top = Number(args.find((a) => a.startsWith('--top='))?.slice(6) ?? 15);
const targets = args.filter((a) => !a.startsWith('--'));
if (!targets.length) {
  console.error('usage: node tools/scripts/cpuprofile-top.mjs <file.cpuprofile | folder> [--top=15]');
  process.exit(2);
}

/** Self time in milliseconds per function and per module of one profile. */
export function summarise(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  // timeDeltas[i] is the time before samples[i]; a sample's time is the delta that follows it.
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  const fns = new Map();
  const modules = new Map();
  let total = 0;
  for (const [id, us] of self) {
    const { callFrame: f } = byId.get(id);
    total += us;
    const where = f.url ? `${shortUrl(f.url)}:${f.lineNumber + 1}` : '';
    const name = `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
    const module = f.url ? moduleOf(f.url) : f.functionName || '(native)';
    modules.set(module, (modules.get(module) ?? 0) + us);
  }
  return { total, fns, modules };
}

function shortUrl(url) {
  const s = url.replace(/^file:\/\//, '');
  const nm = s.lastIndexOf('node_modules/');
  if (nm >= 0) return s.slice(nm + 'node_modules/'.length);
  return s.split('/').slice(-2).join('/');
}

function moduleOf(url) {
  const s = url.replace(/^file:\/\//, '');
  const nm = s.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = s.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (s.startsWith('node:')) return 'node (built-in)';
  return basename(s);
}

function print(file) {
  const { total, fns, modules } = summarise(JSON.parse(readFileSync(file, 'utf8')));
  const rows = (m) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${(us / 1000).toFixed(0).padStart(8)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled\n by module:\n${rows(modules)}\n by function (self):\n${rows(fns)}\n`);
}

for (const t of targets) {
  if (statSync(t).isDirectory()) for (const f of readdirSync(t).filter((f) => f.endsWith('.cpuprofile'))) print(join(t, f));
  else print(t);
}
