import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

/**
 * The Go toolchain of everything in this repository that runs Go for the Go SDK: the SDK's Nx
 * targets (tests, release), `host-plugin pack` and its scaffolded projects, the Go e2e suite and
 * the Go SDK benchmark. One lookup, so they all accept and refuse the same toolchains.
 *
 * Order: an explicit choice (`HOST_PLUGIN_GO`, then `GO`: used if it runs and is new enough, an
 * error otherwise), then `go` on PATH, Debian's versioned installs (/usr/lib/go-1.NN/bin/go,
 * newest first; bookworm-backports has golang-1.23-go) and /usr/local/go/bin/go. The first that
 * is at least MIN_GO wins, or with `oldest` the oldest of them (the SDK's own tests use that, so
 * the oldest version the SDK claims is the one tested wherever it is installed).
 */

/** The oldest Go the SDK supports: the `go` line of libs/plugin-sdk-go/go.mod says the same (a test checks). */
export const MIN_GO: readonly [number, number] = [1, 23];

/** The Go SDK's module path without its major version suffix. */
export const GO_SDK_MODULE_ROOT = 'plugin-host.dev/sdk-go';

/**
 * The Go SDK's module path for an SDK version: from v2 on, Go's semantic import versioning puts the major
 * version at the end of the path (go.dev/ref/mod#major-version-suffixes), so 2.x.y is
 * `plugin-host.dev/sdk-go/v2`. tools/sdk-codegen writes it into hostsdk/wire as ModulePath, which the SDK's
 * go.mod states (a test checks), and `host-plugin init --lang go` names it in new projects.
 */
export function goSdkModulePath(sdkVersion: string): string {
  const major = Number(/^(\d+)\./.exec(sdkVersion)?.[1]);
  if (!Number.isInteger(major)) throw new Error(`"${sdkVersion}" is not a semantic version`);
  return major >= 2 ? `${GO_SDK_MODULE_ROOT}/v${major}` : GO_SDK_MODULE_ROOT;
}

/** Raised when no usable Go is found; the message says what was found and how to install one. */
export class GoToolchainError extends Error {
  override readonly name = 'GoToolchainError';
}

type Env = Record<string, string | undefined>;

/** `go version` of a binary as [major, minor], or undefined when it does not run. */
export function goVersion(bin: string, env: Env = process.env): [number, number] | undefined {
  const r = spawnSync(bin, ['version'], { encoding: 'utf8', env: { ...env, GOTOOLCHAIN: 'local' } });
  const m = r.status === 0 ? /\bgo(\d+)\.(\d+)/.exec(r.stdout) : null;
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

const atLeast = (v: readonly [number, number], min: readonly [number, number]) => v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);
const show = (v: readonly [number, number]) => `go${v.join('.')}`;

/** Debian's /usr/lib/go-1.NN/bin/go, newest first. */
function debianInstalls(lib = '/usr/lib'): string[] {
  if (!existsSync(lib)) return [];
  return readdirSync(lib)
    .map((d) => /^go-(\d+)\.(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(b[1]) - Number(a[1]) || Number(b[2]) - Number(a[2]))
    .map((m) => `${lib}/${m[0]}/bin/go`);
}

export interface FindGoOptions {
  /** Where HOST_PLUGIN_GO, GO and PATH are read; process.env by default. */
  env?: Env;
  /** The oldest acceptable version; MIN_GO by default. */
  min?: readonly [number, number];
  /** Take the oldest acceptable toolchain found instead of the first (explicit choices still win). */
  oldest?: boolean;
}

/** The go command to run (a path or `go`); throws GoToolchainError when there is none. */
export function findGo(options: FindGoOptions = {}): string {
  const env = options.env ?? process.env;
  const min = options.min ?? MIN_GO;
  const hint =
    'On Debian bookworm install golang-1.23-go from bookworm-backports (bash .ci/run does this), or set HOST_PLUGIN_GO=/path/to/bin/go.';
  for (const name of ['HOST_PLUGIN_GO', 'GO']) {
    const given = env[name];
    if (!given) continue;
    const v = goVersion(given, env);
    if (!v) throw new GoToolchainError(`${name}=${given} does not run as a Go toolchain (\`${given} version\` failed). ${hint}`);
    if (!atLeast(v, min)) throw new GoToolchainError(`${name}=${given} is ${show(v)}; the Go SDK needs ${show(min)} or newer. ${hint}`);
    return given;
  }
  const seen: string[] = [];
  let best: { bin: string; v: [number, number] } | undefined;
  for (const bin of ['go', ...debianInstalls(), '/usr/local/go/bin/go']) {
    const v = goVersion(bin, env);
    if (!v) continue;
    if (!atLeast(v, min)) {
      seen.push(`${bin} (${show(v)})`);
      continue;
    }
    if (!options.oldest) return bin;
    if (!best || atLeast(best.v, v)) best = { bin, v };
  }
  if (best) return best.bin;
  const found = seen.length ? ` Found only ${seen.join(', ')}.` : '';
  throw new GoToolchainError(`Go ${min.join('.')} or newer is needed for the Go SDK and was not found.${found} ${hint}`);
}

/**
 * The environment of every Go command: this toolchain only (no automatic download of another),
 * no module proxy, no checksum database; the SDK is standard library only, so nothing is fetched.
 * GO names the toolchain for the packer, which builds with the same one.
 */
export function goEnv(go?: string, env: Env = process.env): Env {
  return { ...env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod', GOSUMDB: 'off', ...(go ? { GO: go } : {}) };
}
