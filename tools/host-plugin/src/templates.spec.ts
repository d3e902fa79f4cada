import { parseStdioManifest } from '@host/protocol';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectFiles } from './templates';

describe('init templates', () => {
  const files = projectFiles({ pluginId: 'com.acme.greeter', name: 'Greeter', author: 'Acme', description: 'Greets.', sdk: '^2.0.0', cli: '^2.0.0' });

  it('writes a complete TypeScript project', () => {
    expect([...files.keys()].sort()).toEqual(['.gitignore', 'README.md', 'jest.config.js', 'manifest.json', 'package.json', 'src/index.ts', 'src/plugin.spec.ts', 'src/plugin.ts', 'tsconfig.build.json', 'tsconfig.json']);
  });

  it('writes a valid manifest whose $schema is the file shipped in the SDK package', () => {
    const manifest = JSON.parse(files.get('manifest.json') as string);
    expect(parseStdioManifest(manifest)).toMatchObject({ ok: true });
    expect(manifest.transport.stdio.args).toEqual(['dist/index.js', '--host-stdio']);
    expect(manifest.$schema).toBe('./node_modules/@host/plugin-sdk-v2/schema/manifest.schema.json');
    // The SDK build ships the schema at that path (package.json "files" has schema/).
    expect(existsSync(join(__dirname, '../../../libs/plugin-sdk/schema/manifest.schema.json'))).toBe(true);
  });

  it('has the SDK as a production dependency and scripts to build, test, validate and pack', () => {
    const pkg = JSON.parse(files.get('package.json') as string);
    expect(pkg.dependencies).toEqual({ '@host/plugin-sdk-v2': '^2.0.0' });
    expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(['build', 'test', 'validate', 'pack', 'notes']));
    expect(pkg.scripts.pack).toBe('npm run build && host-plugin pack');
  });
});
