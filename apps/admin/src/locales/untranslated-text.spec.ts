// A lint of the app's TSX: text a user sees must come from the locale files
// through t() or <Trans>, never be written into JSX. It flags JSX text with a
// letter in it, string literals and template literals placed as JSX children,
// and literal values of the attributes a user reads or hears (title,
// placeholder, aria-label, alt, label...). Identifiers, URLs and example values
// in lowercase (placeholder="https://plugin.example.com", "group-1") are not
// language and pass.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const SRC = join(__dirname, '..');
const SHOWN_ATTRIBUTES = new Set(['title', 'placeholder', 'aria-label', 'aria-description', 'aria-placeholder', 'alt', 'label', 'summary']);
const LETTER = /\p{L}/u;
/** An identifier, path or number, or a URL: no words of a language. */
const NOT_LANGUAGE = /^(?:[a-z0-9_./:@+-]*|https?:\/\/\S+)$/;

function tsxFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsxFiles(path);
    return name.endsWith('.tsx') && !name.endsWith('.spec.tsx') ? [path] : [];
  });
}

/** Each finding as "file:line: what". */
export function untranslatedText(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) =>
    found.push(`${relative(SRC, fileName)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  const literalText = (node: ts.Node): string | undefined => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join('…');
    return undefined;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isJsxText(node)) {
      const t = node.text.trim();
      if (LETTER.test(t)) at(node, `JSX text "${t}"`);
    } else if (ts.isJsxExpression(node) && node.expression && (ts.isJsxElement(node.parent) || ts.isJsxFragment(node.parent))) {
      // {'text'} or {`text ${x}`} as a child, or either branch of a condition there.
      const candidates = ts.isConditionalExpression(node.expression)
        ? [node.expression.whenTrue, node.expression.whenFalse]
        : ts.isBinaryExpression(node.expression)
          ? [node.expression.right]
          : [node.expression];
      for (const c of candidates) {
        const t = literalText(c);
        if (t !== undefined && LETTER.test(t)) at(c, `text in JSX "${t.trim()}"`);
      }
    } else if (ts.isJsxAttribute(node) && SHOWN_ATTRIBUTES.has(node.name.getText(source)) && node.initializer) {
      const init = node.initializer;
      const value = ts.isJsxExpression(init) ? init.expression : init;
      const candidates = value && ts.isConditionalExpression(value) ? [value.whenTrue, value.whenFalse] : value ? [value] : [];
      for (const c of candidates) {
        const t = literalText(c);
        if (t !== undefined && LETTER.test(t) && !NOT_LANGUAGE.test(t.trim())) at(c, `${node.name.getText(source)}="${t.trim()}"`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('text shown to users in the admin app', () => {
  it('finds what it must: JSX text, literal children and shown attributes', () => {
    const sample = `
      const A = () => (
        <div title="Save it" aria-label={ok ? 'Ready' : t('x')} placeholder="https://plugin.example.com">
          Hello <b>{'there'}</b> {busy ? t('a') : \`Wait \${n} s\`} · — {t('fine')} {n} ms
          <input placeholder="group-1" title="https://bots.qq.com/app/getAppAccessToken" alt={\`Photo of \${name}\`} className="Not shown" />
        </div>
      );`;
    expect(untranslatedText(join(SRC, 'sample.tsx'), sample).map((f) => f.replace(/^sample\.tsx:\d+: /, ''))).toEqual([
      'title="Save it"',
      'aria-label="Ready"',
      'JSX text "Hello"',
      'text in JSX "there"',
      'text in JSX "Wait … s"',
      'JSX text "ms"',
      'alt="Photo of …"',
    ]);
  });

  it('all comes from the locale files', () => {
    const files = tsxFiles(SRC);
    expect(files.length).toBeGreaterThan(15);
    expect(files.flatMap((f) => untranslatedText(f, readFileSync(f, 'utf8')))).toEqual([]);
  });
});
