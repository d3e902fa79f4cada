import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HostMetrics } from './host-metrics';
import { parseExposition } from './testing';

const OPERATOR_DOCS = join(__dirname, '../../../docs/operator');

/** The family a sample name belongs to (a histogram's _bucket, _sum and _count are its own). */
const familyOf = (name: string, families: Map<string, string>) => (families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, ''));

describe('the operator docs and the dashboard name the families the host exports', () => {
  let families: Map<string, string>;
  beforeAll(async () => {
    families = parseExposition((await new HostMetrics().render()).body).types;
  });

  it('metrics.md describes every family of the host and none it lacks', () => {
    const page = readFileSync(join(OPERATOR_DOCS, 'metrics.md'), 'utf8');
    const described = new Set([...page.matchAll(/^\| `(host_[a-z0-9_]+)` \|/gm)].map((m) => m[1]!));
    const own = [...families.keys()].filter((n) => !n.startsWith('host_process_') && !n.startsWith('host_nodejs_'));
    expect([...described].sort()).toEqual(own.sort());
  });

  it('grafana-dashboard.json is a Grafana JSON model whose queries use only families the host exports', () => {
    const dashboard = JSON.parse(readFileSync(join(OPERATOR_DOCS, 'grafana-dashboard.json'), 'utf8')) as {
      uid: string;
      schemaVersion: number;
      panels: { type: string; targets?: { expr: string }[] }[];
    };
    expect(dashboard.uid).toBe('plugin-host');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const used = dashboard.panels.flatMap((p) =>
      (p.targets ?? []).flatMap((t) => [...t.expr.matchAll(/\bhost_[a-z0-9_]+/g)].map((m) => m[0])),
    );
    expect(used.length).toBeGreaterThan(20);
    expect(used.map((n) => familyOf(n, families)).filter((n) => !families.has(n))).toEqual([]);
  });
});
