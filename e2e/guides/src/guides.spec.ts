import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, api, isolationModesHere, ROOT, startHost, type RunningHost } from '@host/e2e-support';
import { containsMismatch, firstHostStep, quickstartScript, quickstartSteps, rerunSteps, type QuickstartStep } from './quickstart';

// Each plugin author guide's quick start, run exactly as docs/guides/<language>/README.md writes it (see
// quickstart.ts for the markers), in an empty folder outside the repository, against a real built host of
// its own. A guide gets a quick start by writing its Markdown: nothing here names a language's commands.
// The host runs in its default isolation (the strongest this machine offers); the steps that talk to the host
// (install, update, chat) then run again against a host in each weaker mode the machine offers, so the plugin the
// guide built serves in every mode.
const GUIDES = join(ROOT, 'docs/guides');
const CLI = join(ROOT, 'tools/host-plugin/dist/cli.cjs');

/** Guides whose quick start is not written yet; the test fails when one of them gets one, so the list shrinks. */
const NO_QUICKSTART_YET: string[] = [];

/**
 * Guides whose quick start does not yet add the bot to a group, send a command and click a button its answer
 * offers; the test fails when one of them does, so the list shrinks.
 */
const NO_EVENTS_IN_QUICKSTART_YET: string[] = [];

const MODES = isolationModesHere();
const OTHER_MODES = MODES.slice(0, -1);

const guides = readdirSync(GUIDES, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(GUIDES, d.name, 'README.md')))
  .map((d) => ({ name: d.name, steps: quickstartSteps(readFileSync(join(GUIDES, d.name, 'README.md'), 'utf8')) }));

it('every guide but those listed as pending has a quick start that ends by chatting with the plugin', () => {
  expect(guides.map((g) => g.name)).toEqual(expect.arrayContaining(['node', 'python', 'go', 'csharp']));
  for (const g of guides) {
    if (NO_QUICKSTART_YET.includes(g.name)) {
      expect({ guide: g.name, steps: g.steps.length }).toEqual({ guide: g.name, steps: 0 });
      continue;
    }
    expect({ guide: g.name, hasSteps: g.steps.length > 0 }).toEqual({ guide: g.name, hasSteps: true });
    const chat = g.steps[g.steps.length - 1]!;
    expect(chat.script).toMatch(/\/api\/console\/(messages|chat-events)\b/);
    expect(chat.expect?.json).toEqual(expect.objectContaining({ outbound: expect.any(Array) }));
  }
});

it('every guide but those listed as pending adds the bot to a group, sends a command and clicks a button, with the answers', () => {
  for (const g of guides) {
    // The steps whose page shows what the plugin sent back.
    const answered = g.steps
      .filter((s) => (s.expect?.json as { outbound?: unknown } | undefined)?.outbound !== undefined)
      .map((s) => s.script);
    const event = (type: string) => answered.some((s) => s.includes('/api/console/chat-events') && s.includes(`"eventType":"${type}"`));
    const has = {
      guide: g.name,
      message: answered.some((s) => s.includes('/api/console/messages')),
      botAdded: event('bot.added'),
      click: event('interaction.created'),
    };
    if (NO_EVENTS_IN_QUICKSTART_YET.includes(g.name))
      expect({ guide: g.name, done: has.botAdded && has.click }).toEqual({ guide: g.name, done: false });
    else expect(has).toEqual({ guide: g.name, message: true, botAdded: true, click: true });
  }
});

describe.each(guides.filter((g) => g.steps.length > 0))('the $name guide quick start', ({ name, steps }) => {
  let work: string;
  let host: RunningHost;
  const others: { mode: string; host: RunningHost; outDir: string }[] = [];
  let outDir: string;
  let result: { code: number | null; out: string };

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npx nx run e2e-guides:test", which builds it first`);
    work = mkdtempSync(join(tmpdir(), `guide-${name}-`));
    // A plugin of a user of its own (own-user mode) must be able to pass through to its package folder.
    chmodSync(work, 0o711);
    outDir = join(work, 'steps');
    const prefix = join(work, 'npm-global');
    const cwd = join(work, 'reader');
    for (const d of [outDir, cwd]) mkdirSync(d);
    // The reader's "Before you start": `npm install -g ./tools/host-plugin` in the checkout (into a global
    // folder of this run's own) puts the built CLI on the PATH as `host-plugin`.
    const linked = spawnSync('npm', ['install', '-g', '--no-audit', '--no-fund', './tools/host-plugin'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, npm_config_prefix: prefix },
    });
    if (linked.status !== 0) throw new Error(`npm install -g ./tools/host-plugin failed:\n${linked.stdout}\n${linked.stderr}`);
    host = await startHost(join(work, 'data'));
    for (const mode of OTHER_MODES) {
      const other = await startHost(join(work, `data-${mode}`), { HOST_PLUGIN_ISOLATION: mode });
      others.push({ mode, host: other, outDir: join(work, `steps-${mode}`) });
    }
    const script = join(work, 'quickstart.sh');
    writeFileSync(
      script,
      quickstartScript(
        steps,
        outDir,
        others.map((o) => ({ hostUrl: o.host.url, outDir: o.outDir })),
      ),
    );
    const env = {
      ...process.env,
      PATH: [join(prefix, 'bin'), process.env['PATH'] ?? ''].join(':'),
      HOST_URL: host.url,
      ADMIN_TOKEN,
      // This machine's network: npm from the cache the workspace install filled, Go with no module proxy.
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      GOTOOLCHAIN: 'local',
      GOPROXY: 'off',
      FORCE_COLOR: '0',
      CI: 'true',
    };
    for (const k of Object.keys(env)) if (k.startsWith('NX_') || k.startsWith('JEST')) delete env[k as keyof typeof env];
    result = await new Promise((done) => {
      const child = spawn('bash', [script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', (code) => done({ code, out }));
    });
  });

  afterAll(async () => {
    await host?.stop();
    for (const o of others) await o.host.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const report = (n: number, step: QuickstartStep, dir: string, ran: RunningHost) => {
    const read = (ext: string) => (existsSync(join(dir, `${n}.${ext}`)) ? readFileSync(join(dir, `${n}.${ext}`), 'utf8') : '');
    return `docs/guides/${name}/README.md line ${step.line}:\n${step.script}\n--- stdout\n${read('out').slice(-4000)}\n--- stderr\n${read('err').slice(-4000)}\n--- host\n${ran.output().slice(-2000)}`;
  };

  const check = (n: number, step: QuickstartStep, dir: string, ran: RunningHost) => {
    if (!existsSync(join(dir, `${n}.done`)))
      throw new Error(`the step failed or did not run (bash exited ${result.code}):\n${report(n, step, dir, ran)}`);
    if (!step.expect) return;
    const stdout = readFileSync(join(dir, `${n}.out`), 'utf8').trim();
    let json: unknown;
    try {
      json = JSON.parse(stdout);
    } catch {
      json = JSON.parse(stdout.split('\n').pop() ?? '');
    }
    const mismatch = containsMismatch(json, step.expect.json);
    if (mismatch)
      throw new Error(`the output differs from the page's (line ${step.expect.line}): ${mismatch}\n${report(n, step, dir, ran)}`);
  };

  it.each(steps.map((step, n) => ({ n, step, first: step.script.split('\n')[0] })))('step $n: $first', ({ n, step }) => {
    check(n, step, outDir, host);
  });

  const again = rerunSteps(steps).map((n) => ({ n, step: steps[n]!, first: steps[n]!.script.split('\n')[0] }));
  describe.each(OTHER_MODES)('again on a host with HOST_PLUGIN_ISOLATION=%s', (mode) => {
    it.each(again)('step $n: $first', ({ n, step }) => {
      const other = others.find((o) => o.mode === mode)!;
      check(n, step, other.outDir, other.host);
    });
  });

  // The plugin the guide built passes the host's own conformance run (POST /api/plugins/{id}/doctor), which runs it
  // isolated as the plugin itself runs, on the host of each mode.
  const installed = (dir: string): string | undefined => {
    const out = join(dir, `${firstHostStep(steps)}.out`);
    if (!existsSync(out)) return undefined;
    try {
      return (JSON.parse(readFileSync(out, 'utf8')) as { plugin?: { pluginId?: string } }).plugin?.pluginId;
    } catch {
      return undefined;
    }
  };
  it.each(['default', ...OTHER_MODES])('passes the host doctor on the host with the %s isolation', async (mode) => {
    const target = mode === 'default' ? { host, outDir } : others.find((o) => o.mode === mode)!;
    const pluginId = installed(target.outDir);
    if (!pluginId) throw new Error(`the install step of the quick start did not answer a plugin:\n${target.host.output().slice(-2000)}`);
    const r = await api(target.host, 'POST', `/api/plugins/${pluginId}/doctor`);
    const failed = ((r.body?.report?.checks ?? []) as { id: string; status: string; seen?: string }[]).filter((c) => c.status === 'fail');
    expect({ status: r.status, passed: r.body?.report?.passed, failed }).toEqual({ status: 200, passed: true, failed: [] });
  });

  it('runs to the end', () => {
    expect({ code: result.code, tail: result.code === 0 ? '' : result.out.slice(-3000) }).toEqual({ code: 0, tail: '' });
  });
});
