// Finds the Go toolchain for the SDK's Nx targets and runs it offline.
// Order: $GO, `go` on PATH, then Debian's versioned installs (/usr/lib/go-1.NN/bin/go, newest first),
// then /usr/local/go. The first one of at least MIN_GO is used.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

export const MIN_GO = [1, 23];

function versionOf(bin) {
  const r = spawnSync(bin, ['version'], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' } });
  const m = r.status === 0 ? /go(\d+)\.(\d+)/.exec(r.stdout) : null;
  return m ? [Number(m[1]), Number(m[2])] : null;
}

const atLeast = (v, min) => v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);

export function findGo() {
  const candidates = [];
  if (process.env.GO) candidates.push(process.env.GO);
  candidates.push('go');
  const debian = existsSync('/usr/lib')
    ? readdirSync('/usr/lib')
        .filter((d) => /^go-\d+\.\d+$/.test(d))
        .sort((a, b) => Number(b.split('.')[1]) - Number(a.split('.')[1]))
    : [];
  for (const d of debian) candidates.push(`/usr/lib/${d}/bin/go`);
  candidates.push('/usr/local/go/bin/go');
  const seen = [];
  for (const bin of candidates) {
    const v = versionOf(bin);
    if (v) seen.push(`${bin} (go${v.join('.')})`);
    if (v && atLeast(v, MIN_GO)) return bin;
  }
  const found = seen.length ? ` Found only: ${seen.join(', ')}.` : '';
  throw new Error(
    `Go ${MIN_GO.join('.')} or newer is needed for the Go SDK and was not found.${found} ` +
      'On Debian bookworm install golang-1.23-go from bookworm-backports (bash .ci/run does this), ' +
      'or set GO=/path/to/bin/go.',
  );
}

/** The environment of every Go command: this toolchain only, no network, no vendoring. */
export function goEnv() {
  return { ...process.env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod', GOSUMDB: 'off' };
}
