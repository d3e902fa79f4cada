import { CONFORMANCE_SUITE, SPEC_DOCUMENT_PATH } from '@host/protocol';

export type CheckStatus = 'pass' | 'fail' | 'skip';

/** One check of the report: what it asserts, its outcome, what the runner saw and how to fix a failure. */
export interface CheckResult {
  id: string;
  title: string;
  status: CheckStatus;
  /** Every check is required: a `fail` fails the plugin; a `skip` (the check does not apply) does not. */
  required: boolean;
  /** What was seen: on a fail the failures, on a pass what passed, on a skip the reason. */
  seen: string[];
  fix: string;
  /** The section of the spec that states the rule, as a path with its anchor. */
  docs: string;
}

export interface ConformanceReport {
  plugin: { pluginId: string | null; name: string | null; version: string | null };
  /** What was checked: a package file or a folder, as given. */
  source: string;
  /** True when no required check failed. */
  passed: boolean;
  startedAt: string;
  durationMs: number;
  checks: CheckResult[];
  counts: { passed: number; failed: number; skipped: number };
  /** How the plugin's processes were isolated, as the host's runtime says it (absent: as the runner's own user). */
  isolation?: string;
}

/** The installer's checks: not a scenario, reported before the process checks. */
export const INSTALLER_CHECK = {
  id: 'installer.package',
  title: 'The package passes the installer’s checks (archive, layout, manifest, start command, dependencies, platform)',
  section: '10-installing-stdio-packages',
  fix: 'Fix the error the installer reports (its code is in the report and in docs/troubleshooting.md), for example with `host-plugin validate` and `host-plugin pack`.',
};

const MAX_SEEN = 12;

/** Collects the outcomes of checks over several scenarios; a check fails when any of its assertions failed. */
export class Outcomes {
  private readonly byCheck = new Map<string, { pass: string[]; fail: string[]; skip: string[] }>();
  /** How the scenarios' processes were isolated (see ConformanceReport.isolation). */
  isolation: string | undefined;
  /** Scenarios a stopped run did not play to their end, in suite order (their checks say so when nothing else did). */
  readonly notPlayed: string[] = [];

  record(check: string, status: CheckStatus, seen: string): void {
    let entry = this.byCheck.get(check);
    if (!entry) this.byCheck.set(check, (entry = { pass: [], fail: [], skip: [] }));
    const list = entry[status];
    if (list.length < MAX_SEEN && !list.includes(seen)) list.push(seen);
  }

  pass(check: string, seen: string): void {
    this.record(check, 'pass', seen);
  }
  fail(check: string, seen: string): void {
    this.record(check, 'fail', seen);
  }
  skip(check: string, why: string): void {
    this.record(check, 'skip', why);
  }

  /** Takes over what `other` (one scenario's outcomes) recorded. */
  addAll(other: Outcomes): void {
    for (const [check, entry] of other.byCheck)
      for (const status of ['pass', 'fail', 'skip'] as const) for (const seen of entry[status]) this.record(check, status, seen);
    if (other.isolation) this.isolation = other.isolation;
  }

  /** The checks in catalogue order (the installer's first) with their combined status. */
  results(): CheckResult[] {
    const all = [INSTALLER_CHECK, ...CONFORMANCE_SUITE.checks];
    return all.map((c) => {
      const entry = this.byCheck.get(c.id) ?? { pass: [], fail: [], skip: [] };
      const status: CheckStatus = entry.fail.length > 0 ? 'fail' : entry.pass.length > 0 ? 'pass' : 'skip';
      const seen = status === 'fail' ? entry.fail : status === 'pass' ? entry.pass : entry.skip.length ? entry.skip : ['not exercised'];
      return { id: c.id, title: c.title, status, required: true, seen, fix: c.fix, docs: `${SPEC_DOCUMENT_PATH}#${c.section}` };
    });
  }
}

export function buildReport(outcomes: Outcomes, plugin: ConformanceReport['plugin'], source: string, startedAt: Date): ConformanceReport {
  const checks = outcomes.results();
  const counts = {
    passed: checks.filter((c) => c.status === 'pass').length,
    failed: checks.filter((c) => c.status === 'fail').length,
    skipped: checks.filter((c) => c.status === 'skip').length,
  };
  return {
    plugin,
    source,
    passed: !checks.some((c) => c.required && c.status === 'fail'),
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
    checks,
    counts,
    ...(outcomes.isolation ? { isolation: outcomes.isolation } : {}),
  };
}

/** The report as text for a terminal: one line per check, then what was seen, the fix and the docs for each failure. */
export function renderReport(report: ConformanceReport): string {
  const p = report.plugin;
  const lines = [`Conformance of ${p.pluginId ?? 'an unreadable package'}${p.version ? ` ${p.version}` : ''} (${report.source})`, ''];
  const mark = { pass: 'pass', fail: 'FAIL', skip: 'skip' } as const;
  let lastWhy = '';
  for (const c of report.checks) {
    lines.push(`  ${mark[c.status]}  ${c.id}: ${c.title}`);
    if (c.status === 'pass') continue;
    // Checks skipped for one reason (the package was refused, the run ended) say it once.
    const why = c.seen.join('\n');
    if (c.status === 'skip' && why === lastWhy) continue;
    if (c.status === 'skip') lastWhy = why;
    for (const s of c.seen) lines.push(`        ${c.status === 'fail' ? 'seen' : 'why '}: ${s}`);
    if (c.status === 'fail') {
      lines.push(`        fix : ${c.fix}`);
      lines.push(`        docs: ${c.docs}`);
    }
  }
  const { passed, failed, skipped } = report.counts;
  lines.push(
    '',
    `${passed} passed, ${failed} failed, ${skipped} skipped in ${(report.durationMs / 1000).toFixed(1)} s: ${report.passed ? 'conforms' : 'does not conform'}`,
  );
  return lines.join('\n');
}
