/**
 * The quick starts of docs/guides/<language>/README.md as tests. A guide marks what a reader types with the
 * info string `sh quickstart` on a fenced block; the blocks run in page order in one bash shell (so a `cd`
 * carries over), from an empty folder. A block marked `json quickstart-output` right after one of them is
 * what that block must print: its stdout, read as JSON, must contain every field the page shows (objects may
 * have more keys, arrays more items). Any other fenced block is prose for the reader and is not run.
 *
 * What a reader does before the quick start (a checkout built, `host-plugin` on the PATH, a host running,
 * its address and admin token in HOST_URL and ADMIN_TOKEN) the test provides with the same real parts:
 * the built CLI linked onto the PATH (what `npm link` does) and a built host started for the run.
 */

/** One `sh quickstart` block and what it must print, with the line of the page it starts on. */
export interface QuickstartStep {
  line: number;
  script: string;
  expect?: { line: number; json: unknown };
}

const FENCE = /^(`{3,}|~{3,})\s*([^`\s]*)(?:\s+(.*?))?\s*$/;

/** The fenced blocks of a Markdown page: language, the words after it, body, and the page line they start on. */
export function fencedBlocks(markdown: string): { lang: string; info: string[]; body: string; line: number }[] {
  const lines = markdown.split('\n');
  const out: { lang: string; info: string[]; body: string; line: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) continue;
    const fence = open[1] as string;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !(lines[j] as string).trim().startsWith(fence)) body.push(lines[j++] as string);
    if (j >= lines.length) throw new Error(`the fenced block on line ${i + 1} is never closed`);
    out.push({ lang: open[2] ?? '', info: (open[3] ?? '').split(/\s+/).filter(Boolean), body: body.join('\n'), line: i + 1 });
    i = j;
  }
  return out;
}

/** The quick start steps of a guide, in page order; an empty list when the page has none. */
export function quickstartSteps(markdown: string): QuickstartStep[] {
  const steps: QuickstartStep[] = [];
  let previous: 'step' | 'other' = 'other';
  for (const block of fencedBlocks(markdown)) {
    if (block.info.includes('quickstart')) {
      if (block.lang !== 'sh' && block.lang !== 'bash') throw new Error(`line ${block.line}: a quickstart block must be sh or bash`);
      steps.push({ line: block.line, script: block.body });
      previous = 'step';
    } else if (block.info.includes('quickstart-output')) {
      const step = steps[steps.length - 1];
      if (previous !== 'step' || !step || step.expect)
        throw new Error(`line ${block.line}: a quickstart-output block must follow a quickstart block directly`);
      if (block.lang !== 'json') throw new Error(`line ${block.line}: a quickstart-output block must be json`);
      try {
        step.expect = { line: block.line, json: JSON.parse(block.body) };
      } catch (e) {
        throw new Error(`line ${block.line}: the quickstart-output block is not JSON: ${(e as Error).message}`);
      }
      previous = 'other';
    } else {
      const unknown = block.info.find((w) => w.startsWith('quickstart'));
      if (unknown) throw new Error(`line ${block.line}: unknown marker "${unknown}" (quickstart or quickstart-output)`);
      previous = 'other';
    }
  }
  return steps;
}

/** Another host the steps that talk to a host run against again, with their output kept apart. */
export interface QuickstartRerun {
  hostUrl: string;
  outDir: string;
}

/** Whether a step talks to the host (`$HOST_URL`). */
function talksToHost(step: QuickstartStep): boolean {
  return /\$\{?HOST_URL\b/.test(step.script);
}

/** The first step that talks to the host (`$HOST_URL`). */
export function firstHostStep(steps: QuickstartStep[]): number {
  return steps.findIndex(talksToHost);
}

/**
 * The steps a rerun plays again, by index: from the first that talks to the host, those that talk to it. The steps
 * in between that do not (editing the project's files) ran once, as a reader does them once; the project they left
 * is the one the later steps use on every host.
 */
export function rerunSteps(steps: QuickstartStep[]): number[] {
  const from = firstHostStep(steps);
  return from < 0 ? [] : steps.map((_, n) => n).filter((n) => n >= from && talksToHost(steps[n]!));
}

/**
 * One bash script running every step in the current shell, each step's stdout and stderr written to
 * `<outDir>/<n>.out` and `<n>.err`, and `<n>.done` once it finished; it stops at the first failing command.
 * Then, for each rerun, the same shell plays the steps of `rerunSteps` again, from the folder the first of them ran
 * in, with HOST_URL set to the rerun's host and output in the rerun's outDir.
 */
export function quickstartScript(steps: QuickstartStep[], outDir: string, reruns: QuickstartRerun[] = []): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const play = (which: number[], dir: string) =>
    which.map((n) => {
      const file = (ext: string) => q(`${dir}/${n}.${ext}`);
      const mark = n === hostStep && dir === outDir ? 'quickstart_host_step_dir="$PWD"\n' : '';
      return `${mark}{\n${steps[n]!.script}\n} > ${file('out')} 2> ${file('err')}\n: > ${file('done')}`;
    });
  const hostStep = firstHostStep(steps);
  if (reruns.length > 0 && hostStep < 0) throw new Error('no step talks to the host ($HOST_URL), so there is nothing to run again');
  const again = reruns.flatMap((r) => [
    `mkdir -p ${q(r.outDir)}`,
    'cd "$quickstart_host_step_dir"',
    `export HOST_URL=${q(r.hostUrl)}`,
    ...play(rerunSteps(steps), r.outDir),
  ]);
  return [
    'set -eo pipefail',
    `mkdir -p ${q(outDir)}`,
    ...play(
      steps.map((_, n) => n),
      outDir,
    ),
    ...again,
    '',
  ].join('\n');
}

/**
 * Where `actual` fails to contain `expected`: objects must have each expected key (more are fine), arrays
 * must hold a match for each expected item in the same order (more items are fine), anything else must be
 * equal. Answers null when it contains it, else the path and what differs.
 */
export function containsMismatch(actual: unknown, expected: unknown, path = '$'): string | null {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    let from = 0;
    for (let i = 0; i < expected.length; i++) {
      let found = -1;
      for (let j = from; j < actual.length && found < 0; j++)
        if (containsMismatch(actual[j], expected[i], `${path}[${j}]`) === null) found = j;
      if (found < 0)
        return `${path}: no item (after index ${from - 1}) contains ${JSON.stringify(expected[i])}; got ${JSON.stringify(actual)}`;
      from = found + 1;
    }
    return null;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) return `${path}.${key}: missing in ${JSON.stringify(actual)}`;
      const m = containsMismatch((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
      if (m) return m;
    }
    return null;
  }
  return Object.is(actual, expected) ? null : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}
