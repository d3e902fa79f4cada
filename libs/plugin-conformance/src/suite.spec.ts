import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { buildZip } from '@host/host-installer/testing';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderReport, runConformance, type ConformanceReport } from './index';
import { RAW_FAULTS, writeRawFixture, type RawFault } from './testing';

const root = mkdtempSync(join(tmpdir(), 'conformance-spec-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function statusOf(report: ConformanceReport): Record<string, string> {
  return Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
}

describe('the conformance suite against a plugin written without an SDK', () => {
  it('passes every check of a conforming plugin, none skipped', async () => {
    const report = await runConformance(writeRawFixture(join(root, 'good')));
    if (!report.passed) console.log(renderReport(report));
    expect(report.passed).toBe(true);
    expect(Object.values(statusOf(report)).every((s) => s === 'pass')).toBe(true);
  }, 120_000);
});

describe('a run with a time bound', () => {
  it('ends a plugin that never completes at the bound, lists what it did not play, and does not pass', async () => {
    const dir = writeRawFixture(join(root, 'never-completes'), 'no-completion', 'org.conformance.never-completes');
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    // A handler deadline of five minutes: without the bound the run waits that long for each event.
    manifest.concurrency.handlerDeadlineMilliseconds = 300_000;
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    const report = await runConformance(dir, { timeoutMilliseconds: 4000 });
    expect(report.passed).toBe(false);
    const notPlayed = report.checks.filter((c) => c.seen.some((s) => s.startsWith('not played: the run stopped at its time bound of 4 s')));
    expect(notPlayed.map((c) => c.status)).toEqual(notPlayed.map(() => 'skip'));
    expect(notPlayed.map((c) => c.id)).toContain('events.completion');
    // The scenario that was cut short is named with every one after it; the ones before it played and count.
    expect(notPlayed[0]!.seen[0]).toMatch(/scenarios not played to their end: session, stdin-eof, /);
    expect(statusOf(report)['cli.without-host-stdio']).toBe('pass');
    expect(renderReport(report)).toMatch(/not played: the run stopped at its time bound of 4 s/);
  }, 120_000);

  it('changes nothing for a run that ends within it', async () => {
    const report = await runConformance(writeRawFixture(join(root, 'good-bounded')), { timeoutMilliseconds: 100_000 });
    expect(report.passed).toBe(true);
    expect(Object.values(statusOf(report)).every((s) => s === 'pass')).toBe(true);
  }, 120_000);
});

describe('a plugin the busy checks cannot apply to', () => {
  it('skips them with the reason (it declines the plain messages it gets, declaring no command), and still conforms', async () => {
    const report = await runConformance(
      writeRawFixture(join(root, 'observer'), '', 'org.conformance.observer', { commands: false, chatEvents: false }),
    );
    const status = statusOf(report);
    expect(report.passed).toBe(true);
    for (const id of ['ping.while-busy', 'events.overloaded']) {
      expect(status[id]).toBe('skip');
      expect(report.checks.find((c) => c.id === id)!.seen[0]).toMatch(
        /declined 2 of 2 conformance event\(s\) \(a plain message: it declares no command/,
      );
    }
    expect(status['messages.markdown-c2c']).toBe('skip');
    expect(status['events.decision-first']).toBe('skip');
    expect(report.checks.find((c) => c.id === 'events.completion')!.seen[0]).toMatch(/was declined and nothing followed/);
  }, 60_000);
});

describe('events of the other types (events.deliver)', () => {
  const FIXTURES = join(__dirname, '../../../e2e/test-fixtures');
  const seen = (report: ConformanceReport, id: string) => report.checks.find((c) => c.id === id)!.seen;

  it('sends a plugin one event of each type its manifest subscribes to, which it must ACK, complete and answer with replies the host takes', async () => {
    const report = await runConformance(writeRawFixture(join(root, 'chat-events')));
    const status = statusOf(report);
    expect([status['events.deliver-ack'], status['events.deliver-completion'], status['events.deliver-replies']]).toEqual([
      'pass',
      'pass',
      'pass',
    ]);
    expect(seen(report, 'events.deliver-ack').map((s) => s.replace(/ after .*/, ''))).toEqual([
      '[session] interaction.created: ACK accepted=true',
      '[session] bot.added: ACK accepted=true',
      '[session] bot.removed: ACK accepted=true',
      '[session] conversation.opened: ACK accepted=true',
    ]);
    // Its reply to bot.removed is refused as a provider refuses it, and the handler passes the host's code on.
    expect(seen(report, 'events.deliver-replies')).toContain(
      '[session] bot.removed takes no reply: it was refused with message.reference.unavailable and the plugin completed the event with that code',
    );
  }, 60_000);

  it('sends a plugin that subscribes to message.created alone no events.deliver, and skips those checks saying so', async () => {
    // The host's own misbehaving fixture answers no events.deliver: were one sent, its ACK check would fail.
    const report = await runConformance(join(FIXTURES, 'misbehaving-plugin'));
    for (const id of ['events.deliver-ack', 'events.deliver-completion', 'events.deliver-replies']) {
      expect(statusOf(report)[id]).toBe('skip');
    }
    expect(seen(report, 'events.deliver-ack')[0]).toMatch(
      /subscribes to no event type but message\.created, so no events\.deliver was sent/,
    );
  }, 60_000);
});

describe('a package file', () => {
  it('is inspected and unpacked by the installer, then checked like a folder', async () => {
    const dir = writeRawFixture(join(root, 'zipped'));
    const zip = join(root, 'raw.zip');
    writeFileSync(zip, buildZip(['manifest.json', 'plugin.mjs'].map((name) => ({ name, data: readFileSync(join(dir, name)) }))));
    const report = await runConformance(zip);
    expect(report.checks[0]).toMatchObject({ id: 'installer.package', status: 'pass' });
    expect(report.checks[0]!.seen[0]).toMatch(/archive passed the installer's checks \(2 entries\)/);
    expect(report.passed).toBe(true);
  }, 60_000);

  it('that the installer refuses fails installer.package with the installer’s code, and nothing is started', async () => {
    const zip = join(root, 'traversal.zip');
    writeFileSync(zip, buildZip([{ name: '../evil.txt', data: 'x' }]));
    const report = await runConformance(zip);
    expect(report.checks[0]!.status).toBe('fail');
    expect(report.checks[0]!.seen[0]).toMatch(/^INSTALL_[A-Z_]+: /);
    expect(report.checks.slice(1).every((c) => c.status === 'skip')).toBe(true);
  });
});

describe('each deliberately broken plugin fails the check that names its fault', () => {
  const faults = Object.entries(RAW_FAULTS) as [RawFault, string][];
  let reports: Map<RawFault, ConformanceReport>;

  beforeAll(async () => {
    // One run per fault, all at once: most faults cost a bounded wait (a ping deadline, a stop grace), not CPU.
    const runs = await Promise.all(
      faults.map(async ([fault]) => [fault, await runConformance(writeRawFixture(join(root, fault), fault))] as const),
    );
    reports = new Map(runs);
  }, 120_000);

  it.each(faults)('%s fails %s', (fault, check) => {
    const report = reports.get(fault)!;
    const result = report.checks.find((c) => c.id === check)!;
    if (result.status !== 'fail') console.log(renderReport(report));
    expect(result.status).toBe('fail');
    expect(report.passed).toBe(false);
    expect(result.seen.length).toBeGreaterThan(0);
    expect(result.docs).toMatch(/^docs\/protocol\/v2\.md#/);
  });

  it('keeps the other checks of a broken plugin apart: a fault fails few checks, not all', () => {
    for (const [fault] of faults) {
      const failed = reports
        .get(fault)!
        .checks.filter((c) => c.status === 'fail')
        .map((c) => c.id);
      expect({ fault, few: failed.length <= 4 }).toEqual({ fault, few: true });
    }
  });
});
