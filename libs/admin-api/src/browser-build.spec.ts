import { build, type Plugin } from 'esbuild';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

// The admin app imports this library, so it must bundle for the browser
// without any Node built-in. esbuild follows every import from the entry (the
// workspace libraries through their package links and tsconfig paths); a
// plugin turns each Node built-in it meets into a build error.

const BUILTINS = new Set(builtinModules.filter((m) => !m.startsWith('_')));

function refuseNodeBuiltins(found: string[]): Plugin {
  return {
    name: 'refuse-node-builtins',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        const bare = args.path.replace(/^node:/, '').split('/')[0]!;
        if (args.path.startsWith('node:') || BUILTINS.has(bare) || BUILTINS.has(args.path)) {
          found.push(`${args.path} (from ${args.importer})`);
          return { errors: [{ text: `Node built-in "${args.path}" in a browser build` }] };
        }
        return undefined;
      });
    },
  };
}

async function bundleForBrowser(entry: string): Promise<{ ok: boolean; builtins: string[]; bytes: number }> {
  const builtins: string[] = [];
  try {
    const r = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      target: 'es2022',
      logLevel: 'silent',
      plugins: [refuseNodeBuiltins(builtins)],
    });
    return { ok: r.errors.length === 0, builtins, bytes: r.outputFiles.reduce((n, f) => n + f.contents.length, 0) };
  } catch {
    return { ok: false, builtins, bytes: 0 };
  }
}

describe('browser build', () => {
  it('bundles the admin API contract for the browser without Node built-ins', async () => {
    const r = await bundleForBrowser(join(__dirname, 'index.ts'));
    expect(r.builtins).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.bytes).toBeGreaterThan(0);
  }, 60_000);

  it('control: the same check refuses the host admin API, which runs on Node', async () => {
    const r = await bundleForBrowser(join(__dirname, '..', '..', 'host-api', 'src', 'index.ts'));
    expect(r.ok).toBe(false);
    expect(r.builtins.length).toBeGreaterThan(0);
  }, 60_000);
});
