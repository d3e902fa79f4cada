#!/usr/bin/env node
// Builds dist/SDK-V2-Go-<version>.zip with the SDK's own release command (cmd/build-release):
//   node libs/plugin-sdk-go/scripts/release.mjs [--out <folder>]
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { findGo, goEnv } from './go.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--out');
const moduleDir = join(dirname(new URL(import.meta.url).pathname), '..');
const out = at >= 0 ? resolve(args[at + 1]) : join(moduleDir, '..', '..', 'dist');
let go;
try {
  go = findGo();
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const r = spawnSync(go, ['run', './cmd/build-release', '-out', out], { cwd: moduleDir, env: goEnv(), stdio: 'inherit' });
process.exit(r.status ?? 1);
