import type { ErrorInfo } from './error-codes';

/**
 * Checks of a documentation page against an error catalogue, in both
 * directions: every code of the catalogue is documented, and every code the
 * page documents exists. A page documents a code by naming it in backticks in
 * the code column of a Markdown table (a column whose header cell says
 * "code", such as `| code | meaning and fix |` or `| status | body
 * \`error.code\` | when |`). The tests of each package run it on their page:
 * docs/protocol/v2.md for the protocol and host, docs/sdk/node.md for the
 * Node.js SDK, tools/host-plugin/README.md for the packer CLI.
 */

/** The text of `markdown` under the heading `heading` (its text, without the #s), up to the next heading of the same or a higher level. */
export function markdownSection(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  let fenced = false;
  let start = -1;
  let level = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^(#{1,6}) (.+?)\s*$/.exec(line);
    if (!m) continue;
    const depth = (m[1] as string).length;
    if (start >= 0 && depth <= level) return lines.slice(start, i).join('\n');
    if (start < 0 && m[2] === heading) {
      start = i;
      level = depth;
    }
  }
  if (start < 0) throw new Error(`no heading "${heading}" in the page`);
  return lines.slice(start).join('\n');
}

/** Cells of one table row; `\|` inside a cell is text, not a separator. */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

/** Every code named in backticks in the code column of a table of `markdown`, in page order. */
export function documentedErrorCodes(markdown: string): string[] {
  const out: string[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const header = lines[i] as string;
    const separator = lines[i + 1] ?? '';
    if (!header.startsWith('|') || !/^\|[\s:|-]+\|?\s*$/.test(separator)) continue;
    const columns = cells(header)
      .map((cell, index) => (/\bcodes?\b/i.test(cell) ? index : -1))
      .filter((index) => index >= 0);
    let j = i + 2;
    for (; j < lines.length && (lines[j] as string).startsWith('|'); j++) {
      const row = cells(lines[j] as string);
      for (const column of columns) out.push(...[...(row[column] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
    }
    i = j - 1;
  }
  return out;
}

/** How a page and a catalogue disagree: codes the page lacks, and codes it documents that the catalogue lacks. */
export interface ErrorDocDrift {
  undocumented: string[];
  stale: string[];
}

/** Compares the codes documented in `markdown` (see documentedErrorCodes) with `codes`. */
export function errorDocDrift(markdown: string, codes: Iterable<string>): ErrorDocDrift {
  const catalogue = new Set(codes);
  const documented = new Set(documentedErrorCodes(markdown));
  return {
    undocumented: [...catalogue].filter((c) => !documented.has(c)),
    stale: [...documented].filter((c) => !catalogue.has(c)),
  };
}

/**
 * Rendering of error catalogues for the generated blocks of the documentation
 * (docs/protocol/v2.md section 11, docs/troubleshooting.md), shared by the
 * protocol's generator (`npx nx run protocol:docs`) and the host's
 * (`npx nx run host-errors:docs`), so every family reads the same whoever owns it.
 */
const tableCell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A Markdown table; `|` in a cell is escaped and line breaks become spaces. */
export function markdownTable(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(tableCell).join(' | ')} |`),
  ].join('\n');
}

/** One family as a table of code, HTTP status (when any code has one) and message. */
export function errorTable(group: Record<string, ErrorInfo>): string {
  const withStatus = Object.values(group).some((i) => i.status !== undefined);
  const rows = Object.entries(group).map(([c, info]) =>
    withStatus ? ['`' + c + '`', String(info.status ?? ''), info.message] : ['`' + c + '`', info.message],
  );
  return markdownTable(
    withStatus ? ['code', 'HTTP status', 'what it means and what to do'] : ['code', 'what it means and what to do'],
    rows,
  );
}

/** Families with their titles, each as a `####` heading over its table. */
export function errorTables(groups: readonly (readonly [string, Record<string, ErrorInfo>])[]): string {
  return groups.map(([title, group]) => `#### ${title}\n\n${errorTable(group)}`).join('\n\n');
}

/** The troubleshooting entries of families: an index line per family, then a `###` section per family with a `####` entry per code. */
export function troubleshootingEntries(families: readonly (readonly [string, Record<string, ErrorInfo>])[]): string[] {
  const entry = (code: string, info: ErrorInfo): string => {
    const out = [`#### \`${code}\``, '', `${info.status !== undefined ? `HTTP ${info.status}. ` : ''}${info.message}`];
    if (info.causes) out.push('', `**Likely causes.** ${info.causes}`);
    if (info.fix) out.push('', `**Fix.** ${info.fix}`);
    return out.join('\n');
  };
  const index = families
    .map(([title, group]) => `- ${title}: ${Object.keys(group).length} code${Object.keys(group).length === 1 ? '' : 's'}`)
    .join('\n');
  const body = families.map(([title, group]) => [`### ${title}`, ...Object.entries(group).map(([c, i]) => entry(c, i))].join('\n\n'));
  return [index, ...body];
}

const GENERATED_BLOCK = /<!-- BEGIN GENERATED ([\w:.-]+) -->\n[\s\S]*?<!-- END GENERATED \1 -->/g;

/** `doc` without the text of the generated blocks named in `names` (their markers stay). */
export function withoutGeneratedBlocks(doc: string, names: readonly string[]): string {
  return doc.replace(GENERATED_BLOCK, (all, name: string) =>
    names.includes(name) ? `<!-- BEGIN GENERATED ${name} -->\n<!-- END GENERATED ${name} -->` : all,
  );
}

/**
 * Rewrites the generated blocks of `doc` (between `<!-- BEGIN GENERATED name -->` and
 * `<!-- END GENERATED name -->`). Throws when a block has no place in the document, or when the
 * document has a block that neither `blocks` nor `others` (the blocks another generator owns, left
 * as they are; `'any'` leaves every other block) names, so a new method or table cannot be forgotten.
 */
export function applyBlocks(
  doc: string,
  blocks: Record<string, string>,
  docName = 'v2.md',
  others: readonly string[] | 'any' = [],
): string {
  const seen = new Set<string>();
  const text = doc.replace(GENERATED_BLOCK, (all, name: string) => {
    const body = blocks[name];
    if (body === undefined) {
      if (others === 'any' || others.includes(name)) return all;
      throw new Error(`${docName} has a generated block "${name}" that nothing generates; remove its markers`);
    }
    seen.add(name);
    return `<!-- BEGIN GENERATED ${name} -->\n${body}\n<!-- END GENERATED ${name} -->`;
  });
  const missing = Object.keys(blocks).filter((n) => !seen.has(n));
  if (missing.length) {
    throw new Error(
      `${docName} lacks generated blocks ${missing.join(', ')}: add "<!-- BEGIN GENERATED name -->" and "<!-- END GENERATED name -->" lines where they belong`,
    );
  }
  return text;
}
