import Ajv2020 from 'ajv/dist/2020';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadVectorFiles, type VectorCase } from './vectors.spec-helper';
import { buildJsonSchemas, METHODS_FILE_SCHEMA, serializeSchema, STDIO_TRANSPORT, VALID_HTTP_CAPABILITY_VALUES } from './index';

const SCHEMA_DIR = join(__dirname, '..', 'schema');
const REGENERATE = 'The committed JSON Schema is out of date: run `npm run schema` and commit libs/protocol/schema/.';

describe('committed JSON Schema files', () => {
  const generated = buildJsonSchemas();

  it('are exactly what the zod schemas generate', () => {
    const committed = readdirSync(SCHEMA_DIR).sort();
    const stale: string[] = [];
    for (const name of new Set([...committed, ...Object.keys(generated)])) {
      const schema = generated[name];
      const text = committed.includes(name) ? readFileSync(join(SCHEMA_DIR, name), 'utf8') : null;
      if (!schema || text !== serializeSchema(schema)) stale.push(name);
    }
    if (stale.length) throw new Error(`${REGENERATE} Differs: ${stale.join(', ')}`);
  });

  it('compile under JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(generated)) {
      if (name === 'methods.json') continue; // a catalogue of schemas, checked below
      expect(() => ajv.compile(schema)).not.toThrow();
    }
    // Method schemas refer to the file's shared $defs, so they compile as parts of it.
    const file = generated['methods.json'] as { $id: string; methods: Record<string, object> };
    ajv.addSchema(file);
    for (const name of Object.keys(file.methods)) {
      for (const part of ['params', 'result']) {
        expect(ajv.getSchema(`${file.$id}#/methods/${name}/${part}`)).toBeInstanceOf(Function);
      }
    }
  });

  it('describe methods.json with a schema of its own, which refuses a method the protocol lacks', () => {
    const ajv = new Ajv2020({ strict: true });
    const validate = ajv.compile(generated[METHODS_FILE_SCHEMA]!);
    const file = generated['methods.json'] as { methods: Record<string, { direction: string }> };
    expect(validate(file)).toBe(true);
    const extra = { ...file, methods: { ...file.methods, 'host.unknown': file.methods['plugin.ping'] } };
    expect(validate(extra)).toBe(false);
    const { ['plugin.ping']: _ping, ...rest } = file.methods;
    expect(validate({ ...file, methods: rest })).toBe(false);
    const turned = { ...file, methods: { ...file.methods, 'plugin.ping': { ...file.methods['plugin.ping'], direction: 'pluginToHost' } } };
    expect(validate(turned)).toBe(false);
  });

  it('name the shared types once, for generators', () => {
    const file = generated['methods.json'] as { $defs: Record<string, unknown> };
    for (const name of [
      'UserRef',
      'Conversation',
      'Target',
      'PluginError',
      'CommandMatch',
      'MessageReference',
      'MessageEvent',
      'EventAck',
      'RuntimeLimits',
    ]) {
      expect(file.$defs[name]).toBeDefined();
    }
    const event = generated['message-event.schema.json'] as { type: string; $defs: Record<string, unknown> };
    expect(event.type).toBe('object');
    expect(Object.keys(event.$defs).sort()).toEqual([
      'Attachment',
      'BotRef',
      'CommandMatch',
      'Conversation',
      'MessageReference',
      'UserRef',
    ]);
    const manifest = generated['manifest.schema.json'] as { $defs: Record<string, unknown> };
    expect(Object.keys(manifest.$defs).sort()).toEqual(['Command', 'Concurrency', 'ConfigField', 'EventSubscription', 'SupportedPlatform']);
  });

  it('state the real transport and permission rules the zod schema checks in code', () => {
    const manifest = generated['manifest.schema.json'] as {
      properties: { transport: { properties: { type: { const: string } }; required: string[] }; permissions: { uniqueItems: boolean } };
    };
    expect(manifest.properties.transport.properties.type.const).toBe(STDIO_TRANSPORT);
    expect(manifest.properties.transport.required).toEqual(['type', 'stdio']);
    expect(manifest.properties.permissions.uniqueItems).toBe(true);
    const http = generated['http-manifest.schema.json'] as {
      properties: { capabilities: { enum: number[] }; permissions: { uniqueItems: boolean } };
    };
    expect(http.properties.capabilities.enum).toEqual([9, 11, 13, 15]);
    expect(VALID_HTTP_CAPABILITY_VALUES).toEqual([9, 11, 13, 15]);
    expect(http.properties.permissions.uniqueItems).toBe(true);
  });
});

interface ManifestCase extends VectorCase {
  input: unknown;
  jsonSchema: boolean;
  expect: { valid?: true; errors?: unknown[] };
}

// The manifest vectors say whether JSON Schema alone can tell: `jsonSchema:
// true` means the schema reaches the same verdict as the manifest check;
// `false` marks cross-field rules the schema cannot express, and the schema
// must then accept the document (so the flag is checked both ways).
describe.each([
  ['stdio-manifest', 'manifest.schema.json'],
  ['http-manifest', 'http-manifest.schema.json'],
])('%s vectors against %s', (kind, schemaFile) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const check = ajv.compile(JSON.parse(readFileSync(join(SCHEMA_DIR, schemaFile), 'utf8')));
  const cases = loadVectorFiles()
    .filter((f) => f.kind === kind)
    .flatMap((f) => f.cases as ManifestCase[]);

  it('has valid and invalid cases of both detectability flags', () => {
    expect(cases.some((c) => c.expect.valid)).toBe(true);
    expect(cases.some((c) => c.expect.errors && c.jsonSchema)).toBe(true);
    expect(cases.some((c) => c.expect.errors && !c.jsonSchema)).toBe(true);
    expect(cases.every((c) => typeof c.jsonSchema === 'boolean')).toBe(true);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const accepted = check(c.input);
    const valid = c.expect.valid === true;
    const schemaShouldAccept = valid || !c.jsonSchema;
    if (accepted !== schemaShouldAccept) {
      const why = accepted ? 'accepted it' : `rejected it: ${ajv.errorsText(check.errors)}`;
      throw new Error(`${c.name}: expected the JSON Schema to ${schemaShouldAccept ? 'accept' : 'reject'} this manifest, but it ${why}`);
    }
  });
});
