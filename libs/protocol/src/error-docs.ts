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
