import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { applyBlocks, generatedBlocks, HOST_BLOCKS } from '../scripts/doc-tables';
import { troubleshootingBlocks } from '../scripts/troubleshooting';
import {
  buildJsonSchemas,
  documentedErrorCodes,
  ERROR_CATALOG,
  errorDocDrift,
  HTTP_DEFAULTS,
  LIMITS,
  markdownSection,
  METHOD_LIST,
  RpcErrorCode,
  RUNTIME_DEFAULTS,
  SDK_SHARED_ERRORS,
  PACK_ERRORS,
  signingPayload,
  withoutGeneratedBlocks,
  type ErrorInfo,
} from './index';

// docs/protocol/v2.md is the normative spec; these tests keep it in step with
// the code it describes.
const SPEC = join(__dirname, '..', '..', '..', 'docs', 'protocol', 'v2.md');
const doc = readFileSync(SPEC, 'utf8');
// The blocks of the host's own codes are written and checked by @host/host-errors; these tests check the rest.
const wireDoc = withoutGeneratedBlocks(doc, HOST_BLOCKS);

describe('docs/protocol/v2.md', () => {
  it('has up-to-date generated tables', () => {
    const blocks = generatedBlocks({
      schemas: buildJsonSchemas(),
      limitsSource: readFileSync(join(__dirname, 'limits.ts'), 'utf8'),
      capabilitiesSource: readFileSync(join(__dirname, 'capabilities.ts'), 'utf8'),
    });
    if (applyBlocks(doc, blocks, 'v2.md', HOST_BLOCKS) !== doc) {
      throw new Error('The generated tables of docs/protocol/v2.md are stale: run `npx nx run protocol:docs` and commit the result.');
    }
  });

  it('lists every code of the error catalogue and the SDK catalogue in section 11, and no other', () => {
    const codes = [...Object.keys(ERROR_CATALOG), ...Object.keys(SDK_SHARED_ERRORS), ...Object.keys(PACK_ERRORS)];
    expect(errorDocDrift(markdownSection(wireDoc, '11. Errors'), codes)).toEqual({ undocumented: [], stale: [] });
  });

  it('names only existing codes in the code column of any table', () => {
    const known = [
      ...Object.keys(ERROR_CATALOG),
      ...Object.keys(SDK_SHARED_ERRORS),
      ...Object.keys(PACK_ERRORS),
      ...Object.keys(RpcErrorCode),
    ];
    const family = (token: string) => token.endsWith('.*') && known.some((c) => c.startsWith(token.slice(0, -1)));
    // Other tables also name the host's own codes (UPPER_SNAKE); @host/host-errors checks those against its catalogue.
    const hostOwn = (token: string) => /^[A-Z][A-Z0-9_]*$/.test(token) && !/^(SDK|PACK)_/.test(token);
    expect(documentedErrorCodes(wireDoc).filter((token) => !known.includes(token) && !family(token) && !hostOwn(token))).toEqual([]);
  });

  it('names every JSON-RPC error code with its number', () => {
    const missing = Object.entries(RpcErrorCode).filter(([name, value]) => !new RegExp(`\\| ${value} \\| \`${name}\` \\|`).test(doc));
    expect(missing).toEqual([]);
  });

  it('specifies every method in its own section', () => {
    const missing = METHOD_LIST.filter((m) => !new RegExp(`^### 4\\.\\d+ \`${m.method.replace('.', '\\.')}\``, 'm').test(doc));
    expect(missing.map((m) => m.method)).toEqual([]);
  });

  it('quotes every limit and default with its value', () => {
    const missing: string[] = [];
    for (const [group, values] of Object.entries({ LIMITS, RUNTIME_DEFAULTS, HTTP_DEFAULTS })) {
      for (const [key, value] of Object.entries(values)) {
        if (!new RegExp(`\\| \`${group}\\.${key}\` \\| ${value}[ |]`).test(doc)) missing.push(`${group}.${key} = ${value}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('gives a worked signing example that HMAC-SHA256 reproduces', () => {
    const secret = 'kR3d9Zq0bV7xN2mW5tY8uA1sD4fG6hJ9kL0pO3iU7yE';
    const timestamp = '1767225600';
    const deliveryId = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';
    const body = '{"eventId":"evt-1","eventType":"message.created","message":{"content":"hello <world>"}}';
    const sign = (raw: string) =>
      'v1=' +
      createHmac('sha256', secret)
        .update(signingPayload(timestamp, deliveryId, raw))
        .digest('hex');
    // Pinned: a change of the algorithm or of signingPayload must fail here.
    expect(sign(body)).toBe('v1=dd1b9ca9c1bdd4655b3e41ffb1ed167b219333ebf748e8336e0e60093f2dc179');
    expect(sign('')).toBe('v1=5dc4b4eb93176a156c0f900bd8ea479480b6acd1a8b596abf9c2abc563949274');
    const example = doc.slice(doc.indexOf('**Worked example**'));
    for (const value of [secret, timestamp, deliveryId, body, signingPayload(timestamp, deliveryId, body), sign(body), sign('')]) {
      expect(example).toContain('`' + value + '`');
    }
  });

  it('links only to sections and files that exist', () => {
    const slugs = new Set(
      [...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        (m[1] as string)
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, '')
          .replace(/ /g, '-'),
      ),
    );
    const broken: string[] = [];
    for (const [, target] of doc.matchAll(/\]\(([^)\s]+)\)/g)) {
      const t = target as string;
      if (/^https?:/.test(t)) continue;
      if (t.startsWith('#')) {
        if (!slugs.has(t.slice(1))) broken.push(t);
      } else if (!existsSync(join(dirname(SPEC), t.split('#')[0] as string))) {
        broken.push(t);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('docs/troubleshooting.md', () => {
  const page = readFileSync(join(dirname(SPEC), '..', 'troubleshooting.md'), 'utf8');

  it('has the error codes the catalogue generates', () => {
    if (applyBlocks(page, troubleshootingBlocks(), 'troubleshooting.md', HOST_BLOCKS) !== page) {
      throw new Error('The error codes of docs/troubleshooting.md are stale: run `npx nx run protocol:docs` and commit the result.');
    }
  });

  it('has an entry for every code of the error catalogue and the SDK catalogue, with its causes where the catalogue has them', () => {
    const entries = [...withoutGeneratedBlocks(page, HOST_BLOCKS).matchAll(/^#### `([^`]+)`\n\n([\s\S]*?)(?=\n#{2,4} |\n<!-- END)/gm)].map(
      (m) => [m[1] as string, m[2] as string] as const,
    );
    const catalogue: Record<string, ErrorInfo> = { ...ERROR_CATALOG, ...SDK_SHARED_ERRORS, ...PACK_ERRORS };
    expect(entries.map(([c]) => c).sort()).toEqual(Object.keys(catalogue).sort());
    for (const [c, text] of entries) {
      const info = catalogue[c]!;
      expect({ c, message: text.includes(info.message) }).toEqual({ c, message: true });
      if (info.causes) expect({ c, causes: text.includes(`**Likely causes.** ${info.causes}`) }).toEqual({ c, causes: true });
    }
  });
});
