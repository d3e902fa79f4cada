import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildCatalogs,
  ERROR_CATALOG,
  LIMITS,
  PERMISSION_NAMES,
  PACK_ERRORS,
  RpcErrorCode,
  SDK_SHARED_ERRORS,
  serializeSchema,
} from './index';

const CATALOG_DIR = join(__dirname, '..', 'catalog');

describe('committed catalogue files', () => {
  const generated = buildCatalogs();

  it('are exactly what the code generates', () => {
    const committed = readdirSync(CATALOG_DIR).sort();
    expect(committed).toEqual(Object.keys(generated).sort());
    const stale = committed.filter((name) => readFileSync(join(CATALOG_DIR, name), 'utf8') !== serializeSchema(generated[name]!));
    if (stale.length)
      throw new Error(`libs/protocol/catalog/ is out of date: run \`npm run schema\` and commit it. Differs: ${stale.join(', ')}`);
  });

  it('hold every error code, JSON-RPC code, permission and limit once', () => {
    const errors = generated['error-codes.json'] as { families: { codes: { code: string }[] }[] };
    const codes = errors.families.flatMap((f) => f.codes.map((c) => c.code));
    expect(codes.sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
    const sdk = generated['sdk-error-codes.json'] as { codes: { code: string; message: string }[] };
    // The catalogue files carry what the SDKs use (code and message); causes and fixes are for docs/troubleshooting.md.
    expect(Object.fromEntries(sdk.codes.map((c) => [c.code, c.message]))).toEqual(
      Object.fromEntries(Object.entries(SDK_SHARED_ERRORS).map(([c, info]) => [c, info.message])),
    );
    const pack = generated['pack-error-codes.json'] as { codes: { code: string; message: string }[] };
    expect(Object.fromEntries(pack.codes.map((c) => [c.code, c.message]))).toEqual(
      Object.fromEntries(Object.entries(PACK_ERRORS).map(([c, info]) => [c, info.message])),
    );
    const rpc = generated['rpc-error-codes.json'] as { codes: { name: string; code: number }[] };
    expect(Object.fromEntries(rpc.codes.map((c) => [c.name, c.code]))).toEqual(RpcErrorCode);
    const permissions = generated['permissions.json'] as { permissions: { name: string }[] };
    expect(permissions.permissions.map((p) => p.name)).toEqual(PERMISSION_NAMES);
    expect((generated['limits.json'] as { limits: unknown }).limits).toEqual(LIMITS);
  });
});
