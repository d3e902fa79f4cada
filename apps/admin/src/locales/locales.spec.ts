import { HOST_ERROR_CATALOG } from '@host/host-errors';
import { PERMISSIONS } from '@host/protocol';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CHINESE, ENGLISH } from './resources';

type Tree = { [key: string]: string | Tree };

/** `{a: {b: 'x'}}` -> `{'a.b': 'x'}` */
function flatten(tree: Tree, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(tree)) {
    if (typeof v === 'string') out[prefix + k] = v;
    else Object.assign(out, flatten(v, `${prefix}${k}.`));
  }
  return out;
}

const en = flatten(ENGLISH);
const zh = flatten(CHINESE as Tree);
const placeholders = (text: string) => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();
const tags = (text: string) => [...text.matchAll(/<\/?(code|strong)>/g)].map((m) => m[0]).sort();

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !/\.spec\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('the locale files', () => {
  it('have exactly the same keys in English and Chinese', () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });

  it('keep the same placeholders and markup tags in each translation', () => {
    const differing = Object.keys(en).filter(
      (k) =>
        JSON.stringify(placeholders(en[k]!)) !== JSON.stringify(placeholders(zh[k] ?? '')) ||
        JSON.stringify(tags(en[k]!)) !== JSON.stringify(tags(zh[k] ?? '')),
    );
    expect(differing).toEqual([]);
  });

  it('translate every text: no empty string, and no Chinese text left in English', () => {
    expect(Object.entries(zh).filter(([, v]) => v.trim() === '')).toEqual([]);
    expect(Object.entries(en).filter(([, v]) => v.trim() === '' || /[\u4e00-\u9fff]/.test(v))).toEqual([]);
  });

  it("describe every permission of the protocol's catalogue, and word only codes of the error catalogue (besides the app's own)", () => {
    expect(
      Object.keys(zh)
        .filter((k) => k.startsWith('permission.'))
        .map((k) => k.slice('permission.'.length))
        .sort(),
    ).toEqual(Object.keys(PERMISSIONS).sort());
    const appOwn = ['NETWORK'];
    expect(
      Object.keys(zh)
        .filter((k) => k.startsWith('errorCodes.'))
        .map((k) => k.slice('errorCodes.'.length))
        .filter((code) => !(code in HOST_ERROR_CATALOG) && !appOwn.includes(code)),
    ).toEqual([]);
  });

  it('have every key the code asks for by a literal key', () => {
    const used = new Set<string>();
    for (const file of sources(join(__dirname, '..'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\bt\(\s*'([a-zA-Z][\w.]*)'/g)) used.add(m[1]!);
      for (const m of text.matchAll(/i18nKey="([\w.]+)"/g)) used.add(m[1]!);
    }
    expect(used.size).toBeGreaterThan(100);
    expect([...used].filter((k) => !(k in en)).sort()).toEqual([]);
  });
});
