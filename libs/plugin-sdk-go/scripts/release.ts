// Builds dist/SDK-V2-Go-<version>.zip with the SDK's own release command (cmd/build-release):
//   node tools/scripts/ts-run.mjs libs/plugin-sdk-go/scripts/release.ts [--out <folder>]
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { findGo, goEnv } from '../toolchain';

const args = process.argv.slice(2);
const at = args.indexOf('--out');
const moduleDir = join(dirname(new URL(import.meta.url).pathname), '..');
const out = at >= 0 ? resolve(args[at + 1] ?? '') : join(moduleDir, '..', '..', 'dist');
let go = '';
try {
  go = findGo();
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const r = spawnSync(go, ['run', './cmd/build-release', '-out', out], { cwd: moduleDir, env: goEnv(go), stdio: 'inherit' });
process.exit(r.status ?? 1);
