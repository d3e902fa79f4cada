import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  applyBlocks,
  defineErrors,
  documentedErrorCodes,
  ERROR_CATALOG,
  errorDocDrift,
  EVENT_JSON_SHAPE_LIMITS,
  isErrorCode,
  JSON_SHAPE_LIMITS,
  markdownSection,
  PACK_ERRORS,
  RpcErrorCode,
  SDK_SHARED_ERRORS,
  toValidationIssues,
  VALIDATION_DOMAINS,
  withoutGeneratedBlocks,
  type ErrorInfo,
} from '@host/protocol';
import {
  HOST_BLOCKS,
  HOST_ERROR_CATALOG,
  HOST_ERROR_FAMILIES,
  HOST_ONLY_ERRORS,
  HOST_VALIDATION_DOMAINS,
  hostDocBlocks,
  isHostErrorCode,
  REGISTRATION_ERRORS,
  REQUEST_FIELD_ERRORS,
  type HostValidationDomain,
} from './index';

const DOCS = join(__dirname, '..', '..', '..', 'docs');
const spec = readFileSync(join(DOCS, 'protocol', 'v2.md'), 'utf8');
const troubleshooting = readFileSync(join(DOCS, 'troubleshooting.md'), 'utf8');
const catalogue: Record<string, ErrorInfo> = { ...HOST_ERROR_CATALOG, ...SDK_SHARED_ERRORS, ...PACK_ERRORS };

describe('the host catalogue', () => {
  it('is exactly its families, with no code in two of them', () => {
    const codes = Object.values(HOST_ERROR_FAMILIES).flatMap((f) => Object.keys(f));
    expect(codes.length).toBe(new Set(codes).size);
    expect(codes.sort()).toEqual(Object.keys(HOST_ONLY_ERRORS).sort());
  });

  it('shares no code with the wire, SDK and packaging catalogues', () => {
    const host = Object.keys(HOST_ONLY_ERRORS);
    expect(host.filter((c) => isErrorCode(c) || c in SDK_SHARED_ERRORS || c in PACK_ERRORS)).toEqual([]);
  });

  it('writes every host code UPPER_SNAKE, but the field issues of its own request bodies, whose domains the wire lacks', () => {
    const fieldIssue = (c: string) => /^([a-z]+)\.field\.(required|invalid|unknown)$/.exec(c)?.[1];
    const dotted = Object.keys(HOST_ONLY_ERRORS).filter((c) => !/^[A-Z][A-Z0-9_]*$/.test(c));
    expect(dotted.filter((c) => !(fieldIssue(c)! in HOST_VALIDATION_DOMAINS))).toEqual([]);
    expect(Object.keys(HOST_VALIDATION_DOMAINS).filter((d) => d in VALIDATION_DOMAINS)).toEqual([]);
    expect(dotted.sort()).toEqual(Object.keys(REQUEST_FIELD_ERRORS).sort());
  });

  it("gives the field issues of the admin and console API requests the codes of the host's catalogue", () => {
    const body = z.strictObject({ baseUrl: z.string(), enabled: z.boolean().optional() });
    const failed = body.safeParse({ enabled: 'yes', extra: 1 }, { reportInput: true });
    for (const domain of Object.keys(HOST_VALIDATION_DOMAINS) as HostValidationDomain[]) {
      const issues = toValidationIssues(failed.error!, domain, HOST_VALIDATION_DOMAINS);
      expect(Object.fromEntries(issues.map((i) => [i.path, i.code]))).toEqual({
        baseUrl: `${domain}.field.required`,
        enabled: `${domain}.field.invalid`,
        extra: `${domain}.field.unknown`,
      });
      expect(issues.filter((i) => !isHostErrorCode(i.code) || isErrorCode(i.code))).toEqual([]);
    }
  });

  it('keeps the entry format of defineErrors (a family that breaks it does not load)', () => {
    for (const family of Object.values(HOST_ERROR_FAMILIES)) expect(() => defineErrors({ ...family })).not.toThrow();
  });

  it('is the wire catalogue and the host families together, with the entries of each', () => {
    expect(Object.keys(HOST_ERROR_CATALOG).sort()).toEqual([...Object.keys(ERROR_CATALOG), ...Object.keys(HOST_ONLY_ERRORS)].sort());
    expect(HOST_ERROR_CATALOG['message.too_long']).toBe(ERROR_CATALOG['message.too_long']);
    expect(HOST_ERROR_CATALOG.REGISTRATION_TIMEOUT).toBe(REGISTRATION_ERRORS.REGISTRATION_TIMEOUT);
    expect([
      isHostErrorCode('QQBOT_ACCOUNT_EXISTS'),
      isHostErrorCode('message.empty'),
      isHostErrorCode('NOPE'),
      isHostErrorCode(1),
    ]).toEqual([true, true, false, false]);
  });

  it('states the limits of the JSON shape checks in its messages', () => {
    for (const code of ['REQUEST_JSON_TOO_COMPLEX', 'REGISTRATION_MANIFEST_TOO_COMPLEX'] as const) {
      expect(HOST_ERROR_CATALOG[code].message).toContain(`deeper than ${JSON_SHAPE_LIMITS.maxDepth} levels`);
      expect(HOST_ERROR_CATALOG[code].message).toContain(`${JSON_SHAPE_LIMITS.maxEntries.toLocaleString('en')} entries`);
    }
    expect(HOST_ERROR_CATALOG.QQBOT_PAYLOAD_TOO_COMPLEX.message).toContain(`deeper than ${EVENT_JSON_SHAPE_LIMITS.maxDepth} levels`);
  });

  it('writes the causes of the install and start failures people meet most', () => {
    for (const c of ['INSTALL_MANIFEST_MISSING', 'INSTALL_DEPENDENCY_MISSING', 'PLUGIN_START_FAILED', 'PLUGIN_START_TIMEOUT'] as const)
      expect(HOST_ERROR_CATALOG[c].causes).toEqual(expect.any(String));
  });
});

describe('docs/protocol/v2.md', () => {
  it("has the host's tables as the catalogue generates them", () => {
    if (applyBlocks(spec, hostDocBlocks().spec, 'v2.md', 'any') !== spec) {
      throw new Error("The host's error tables in docs/protocol/v2.md are stale: run `npx nx run host-errors:docs` and commit the result.");
    }
  });

  it('lists every code of the host, wire, SDK and packaging catalogues in section 11, and no other', () => {
    expect(errorDocDrift(markdownSection(spec, '11. Errors'), Object.keys(catalogue))).toEqual({ undocumented: [], stale: [] });
  });

  it('lists exactly the host codes in their block', () => {
    const outside = withoutGeneratedBlocks(spec, [HOST_BLOCKS.spec]);
    const block = spec.slice(
      spec.indexOf(`<!-- BEGIN GENERATED ${HOST_BLOCKS.spec} -->`),
      spec.indexOf(`<!-- END GENERATED ${HOST_BLOCKS.spec} -->`),
    );
    expect(errorDocDrift(block, Object.keys(HOST_ONLY_ERRORS))).toEqual({ undocumented: [], stale: [] });
    expect(documentedErrorCodes(markdownSection(outside, '11. Errors')).filter((c) => c in HOST_ONLY_ERRORS)).toEqual([]);
  });

  it('fails the check for a host code the page lacks, or a code no catalogue has', () => {
    const section = markdownSection(spec, '11. Errors');
    const removed = section.replace(/^\| `QQBOT_ACCOUNT_EXISTS` \|.*\n/m, '');
    expect(removed).not.toBe(section);
    expect(errorDocDrift(removed, Object.keys(catalogue)).undocumented).toEqual(['QQBOT_ACCOUNT_EXISTS']);
    const added = section.replace('| `INTERNAL` |', '| `INTERNAL_LEGACY` | 500 | gone |\n| `INTERNAL` |');
    expect(errorDocDrift(added, Object.keys(catalogue)).stale).toEqual(['INTERNAL_LEGACY']);
  });

  it('names only existing codes in the code column of any table', () => {
    const known = [...Object.keys(catalogue), ...Object.keys(RpcErrorCode)];
    const family = (token: string) => token.endsWith('.*') && known.some((c) => c.startsWith(token.slice(0, -1)));
    expect(documentedErrorCodes(spec).filter((token) => !known.includes(token) && !family(token))).toEqual([]);
  });
});

describe('docs/troubleshooting.md', () => {
  it("has the host's codes as the catalogue generates them", () => {
    if (applyBlocks(troubleshooting, hostDocBlocks().troubleshooting, 'troubleshooting.md', 'any') !== troubleshooting) {
      throw new Error("The host's codes in docs/troubleshooting.md are stale: run `npx nx run host-errors:docs` and commit the result.");
    }
  });

  it('has an entry for every code of every catalogue, with its message and causes', () => {
    const entries = [...troubleshooting.matchAll(/^#### `([^`]+)`\n\n([\s\S]*?)(?=\n#{2,4} |\n<!-- END)/gm)].map(
      (m) => [m[1] as string, m[2] as string] as const,
    );
    expect(entries.map(([c]) => c).sort()).toEqual(Object.keys(catalogue).sort());
    for (const [c, text] of entries) {
      const info = catalogue[c]!;
      expect({ c, message: text.includes(info.message) }).toEqual({ c, message: true });
      if (info.causes) expect({ c, causes: text.includes(`**Likely causes.** ${info.causes}`) }).toEqual({ c, causes: true });
      if (info.fix) expect({ c, fix: text.includes(`**Fix.** ${info.fix}`) }).toEqual({ c, fix: true });
    }
  });
});
