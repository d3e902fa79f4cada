import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ROOT } from '@host/e2e-support';

// The operator and plugin author guides link to each other, to the spec's sections and to the SDKs' files:
// every relative link must reach a file, and every #anchor a heading of that page (GitHub's slugs).
// docs/operator/cluster.md is the one page linked before it exists (the cluster deployment is written with
// the SQL store); once it exists its links are checked like any other.
const PENDING = new Set(['docs/operator/cluster.md']);
const pages = [
  ...readdirSync(join(ROOT, 'docs/guides'), { recursive: true, encoding: 'utf8' }).map((f) => `docs/guides/${f}`),
  'docs/operator/README.md',
  'docs/operator/deployment.md',
  'docs/operator/plugins.md',
  'docs/operator/security.md',
  'docs/troubleshooting.md',
].filter((f) => f.endsWith('.md'));

/** GitHub's anchor of each heading of a Markdown page, outside fenced blocks. */
function anchors(file: string): Set<string> {
  let fenced = false;
  const out = new Set<string>();
  for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.+?)\s*$/.exec(line);
    if (m)
      out.add(
        m[1]!
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, '')
          .replace(/ /g, '-'),
      );
  }
  return out;
}

it.each(pages)('%s links only to files and sections that exist', (page) => {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const file = path ? relative(ROOT, join(ROOT, dirname(page), path)) : page;
    if (PENDING.has(file) && !existsSync(join(ROOT, file))) continue;
    if (!existsSync(join(ROOT, file))) broken.push(target!);
    else if (anchor && file.endsWith('.md') && !anchors(file).has(anchor)) broken.push(target!);
  }
  expect(broken).toEqual([]);
});
