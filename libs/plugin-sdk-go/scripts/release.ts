// Builds dist/SDK-V2-Go-<version>.zip with the SDK's own release command (cmd/build-release), or with
// --proxy only the module proxy folder (GOPROXY=file://<folder>), by default dist/go-proxy:
//   node tools/scripts/ts-run.mjs libs/plugin-sdk-go/scripts/release.ts [--out <folder>] [--proxy [<folder>]]
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
const proxyAt = args.indexOf('--proxy');
const proxyArg = args[proxyAt + 1];
const proxy =
  proxyAt < 0 ? '' : resolve(proxyArg && !proxyArg.startsWith('--') ? proxyArg : join(moduleDir, '..', '..', 'dist', 'go-proxy'));
const command = proxy ? ['run', './cmd/build-release', '-proxy', proxy] : ['run', './cmd/build-release', '-out', out];
const r = spawnSync(go, command, { cwd: moduleDir, env: goEnv(go), stdio: 'inherit' });
process.exit(r.status ?? 1);
