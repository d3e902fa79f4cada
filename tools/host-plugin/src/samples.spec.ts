import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseStdioManifest, type StdioManifest } from '@host/protocol';
import { csharpProjectFiles } from './csharp';
import { goProjectFiles } from './go';
import { pythonProjectFiles } from './python';
import { projectFiles } from './templates';

/**
 * The `init` templates and the samples of the SDKs are the same plugin in two places: each sample's
 * command handlers must read as the template's, and its manifest must declare what the template's does
 * for them. A change to either side fails here, naming the file and the first line that differs.
 */

const ROOT = resolve(__dirname, '../../..');

type Language = 'node' | 'python' | 'go' | 'csharp';

interface Sample {
  language: Language;
  /** The sample's folder, from the repository root. */
  dir: string;
  /** The file of the sample with the handlers, and the template's file with them. */
  source: string;
  templateSource: string;
  /** The file of this CLI that writes the template. */
  templateFile: string;
  files: (o: { pluginId: string; name: string; author: string; description: string }) => Map<string, string>;
}

const SAMPLES: Sample[] = [
  {
    language: 'node',
    dir: 'examples/echo-plugin',
    source: 'src/plugin.ts',
    templateSource: 'src/plugin.ts',
    templateFile: 'tools/host-plugin/src/templates.ts',
    files: (o) => projectFiles({ ...o, sdk: '*', cli: '*' }),
  },
  {
    language: 'python',
    dir: 'libs/plugin-sdk-python/samples/echo',
    source: 'plugin.py',
    templateSource: 'plugin.py',
    templateFile: 'tools/host-plugin/src/python.ts',
    files: pythonProjectFiles,
  },
  {
    language: 'go',
    dir: 'libs/plugin-sdk-go/samples/echo',
    source: 'main.go',
    templateSource: 'main.go',
    templateFile: 'tools/host-plugin/src/go.ts',
    files: goProjectFiles,
  },
  {
    language: 'csharp',
    dir: 'libs/plugin-sdk-csharp/samples/Echo',
    source: 'Program.cs',
    templateSource: 'EchoPlugin.cs',
    templateFile: 'tools/host-plugin/src/csharp.ts',
    files: csharpProjectFiles,
  },
];

/** The line that registers the handler of a command, in each language. */
function registration(language: Language, command: string): RegExp {
  const word = command.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  switch (language) {
    case 'node':
      return new RegExp(`^\\s*async ${word}\\(ctx\\) \\{`);
    case 'python':
      return new RegExp(`^@plugin\\.command\\("${word}"\\)`);
    case 'go':
      return new RegExp(`^\\s*plugin\\.Command\\("${word}",`);
    case 'csharp':
      return new RegExp(`^\\s*\\.Command\\("${word}",`);
  }
}

/** A line without its string literals, so brackets inside them are not counted. */
const withoutStrings = (line: string) => line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""');

/**
 * The lines of a command's handler, trimmed, blank lines left out: from its registration to the
 * bracket that closes it (Node.js, Go, C#) or to the next line back at the margin (Python). Undefined
 * when the file registers no handler for the command.
 */
function handlerLines(language: Language, text: string, command: string): string[] | undefined {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => registration(language, command).test(l));
  if (start < 0) return undefined;
  let end = start;
  if (language === 'python') {
    // The decorator, the def line, then every line indented under it.
    end = start + 1;
    while (end + 1 < lines.length && (lines[end + 1]!.trim() === '' || /^\s/.test(lines[end + 1]!))) end++;
  } else {
    let depth = 0;
    let opened = false;
    for (end = start; end < lines.length; end++) {
      for (const c of withoutStrings(lines[end]!)) {
        if ('({['.includes(c)) {
          depth++;
          opened = true;
        } else if (')}]'.includes(c)) depth--;
      }
      if (opened && depth <= 0) break;
    }
  }
  return lines
    .slice(start, end + 1)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Where two handlers part: the first differing line, or undefined when they agree. */
function firstDifference(sample: string[], template: string[]): string | undefined {
  for (let i = 0; i < Math.max(sample.length, template.length); i++) {
    if (sample[i] !== template[i]) {
      const show = (l: string | undefined) => (l === undefined ? '(the handler has ended)' : JSON.stringify(l));
      return `line ${i + 1} of the handler: the sample has ${show(sample[i])}, the template ${show(template[i])}`;
    }
  }
  return undefined;
}

function manifestOf(path: string): StdioManifest {
  const parsed = parseStdioManifest(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.ok) throw new Error(`${path} is not a valid manifest: ${parsed.issues.map((i) => i.message).join('; ')}`);
  return parsed.value;
}

/** What a sample and the starter must both declare, given the commands of the sample. */
function agreeingFields(m: StdioManifest, commands: readonly string[]) {
  return {
    protocolVersion: m.protocolVersion,
    sdkVersion: m.sdkVersion,
    transport: m.transport.type,
    permissions: [...m.permissions].sort(),
    commands: commands.map((name) => m.commands.find((c) => c.name === name)),
  };
}

describe.each(SAMPLES)('the $language init template and its sample ($dir)', (s) => {
  const sampleManifest = manifestOf(join(ROOT, s.dir, 'manifest.json'));
  const generated = s.files({
    pluginId: sampleManifest.pluginId,
    name: sampleManifest.name,
    author: sampleManifest.author,
    description: sampleManifest.description ?? '',
  });
  const templateManifest = parseStdioManifest(JSON.parse(generated.get('manifest.json')!));
  if (!templateManifest.ok) throw new Error(`the ${s.language} template writes an invalid manifest`);
  const commands = sampleManifest.commands.map((c) => c.name);

  it('has the handler of every command of the sample, line for line', () => {
    const sampleText = readFileSync(join(ROOT, s.dir, s.source), 'utf8');
    const templateText = generated.get(s.templateSource)!;
    expect(commands.length).toBeGreaterThan(0);
    const drift = commands.flatMap((command) => {
      const sample = handlerLines(s.language, sampleText, command);
      const template = handlerLines(s.language, templateText, command);
      if (!sample) return [`${s.dir}/${s.source} has no handler for "${command}", which its manifest declares`];
      if (!template) return [`${s.templateFile} writes no handler for "${command}" into ${s.templateSource}`];
      const where = firstDifference(sample, template);
      return where
        ? [`the "${command}" handler of ${s.dir}/${s.source} differs from ${s.templateFile} (${s.templateSource}) at ${where}`]
        : [];
    });
    expect(drift).toEqual([]);
  });

  it("declares in manifest.json what the template's manifest declares for those commands", () => {
    const sample = agreeingFields(sampleManifest, commands);
    const template = agreeingFields(templateManifest.value, commands);
    const drift = (Object.keys(sample) as (keyof typeof sample)[])
      .filter((field) => JSON.stringify(sample[field]) !== JSON.stringify(template[field]))
      .map(
        (field) =>
          `${s.dir}/manifest.json: ${field} is ${JSON.stringify(sample[field])}, the template's (${s.templateFile}) ${JSON.stringify(template[field])}`,
      );
    // The template may subscribe to more (its other handlers need them), never to less.
    const have = new Set(templateManifest.value.eventSubscriptions.map((e) => e.eventType));
    for (const e of sampleManifest.eventSubscriptions) {
      if (!have.has(e.eventType))
        drift.push(`${s.dir}/manifest.json subscribes to ${e.eventType}, the template's (${s.templateFile}) does not`);
    }
    expect(drift).toEqual([]);
  });
});

describe('handlerLines', () => {
  it('reads a handler to its closing bracket, brackets in strings aside, and a Python one to the margin', () => {
    const go = 'plugin.Command("a", func(ctx *C) error {\n\tx := "})"\n\treturn nil\n})\nplugin.Command("b", nil)\n';
    expect(handlerLines('go', go, 'a')).toEqual(['plugin.Command("a", func(ctx *C) error {', 'x := "})"', 'return nil', '})']);
    const py = '@plugin.command("a")\ndef a(ctx):\n    x = 1\n\n    return x\n\n\n@plugin.command("b")\n';
    expect(handlerLines('python', py, 'a')).toEqual(['@plugin.command("a")', 'def a(ctx):', 'x = 1', 'return x']);
    expect(handlerLines('csharp', '.Command("b", ctx => ctx.Reply())', 'a')).toBeUndefined();
  });
});
