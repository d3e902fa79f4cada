import { z } from 'zod';
import {
  defineErrors,
  ERROR_CATALOG,
  ERROR_FAMILIES,
  FIELD_ISSUE_ERRORS,
  isErrorCode,
  issueParams,
  SDK_SHARED_ERRORS,
  PACK_ERRORS,
  toValidationIssues,
  VALIDATION_DOMAINS,
  type ValidationDomain,
} from './index';

describe('defineErrors', () => {
  it('returns the family frozen, as given', () => {
    const family = defineErrors({
      'demo.thing.failed': { message: 'The thing failed. Try again.' },
      DEMO_FAILED: { status: 409, message: 'It failed. Retry.' },
    });
    expect(Object.isFrozen(family)).toBe(true);
    expect(family.DEMO_FAILED.status).toBe(409);
  });

  it('takes the likely causes and the longer fix that docs/troubleshooting.md shows', () => {
    const family = defineErrors({
      DEMO_FAILED: { message: 'It failed. Retry.', causes: 'A typo in the name.', fix: 'Correct the name (see the log).' },
    });
    expect(family.DEMO_FAILED.causes).toBe('A typo in the name.');
  });

  it.each([
    ['a code of mixed style', { Demo_Failed: { message: 'It failed. Retry later.' } }, 'neither dotted lowercase'],
    ['a dotted code of one segment', { demo: { message: 'It failed. Retry later.' } }, 'neither dotted lowercase'],
    ['a message without the fix', { DEMO_FAILED: { message: 'failed' } }, 'needs a message of full sentences'],
    ['a status that is not an error', { DEMO_FAILED: { status: 200, message: 'It failed. Retry later.' } }, 'has status 200'],
    [
      'an unknown entry field',
      { DEMO_FAILED: { message: 'It failed. Retry later.', hint: 'retry' } as never },
      'unknown entry fields hint',
    ],
    [
      'causes that are not sentences',
      { DEMO_FAILED: { message: 'It failed. Retry later.', causes: 'a typo' } },
      'has a causes that is not',
    ],
    ['a fix that is not text', { DEMO_FAILED: { message: 'It failed. Retry later.', fix: 3 as never } }, 'has a fix that is not'],
  ])('refuses %s', (_name, family, error) => {
    expect(() => defineErrors(family)).toThrow(error);
  });
});

describe('ERROR_CATALOG', () => {
  it('is exactly its families, with no code in two of them', () => {
    const codes = Object.values(ERROR_FAMILIES).flatMap((f) => Object.keys(f));
    expect(codes.length).toBe(new Set(codes).size);
    expect(codes.sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
  });

  it('holds only dotted lowercase codes (UPPER_SNAKE codes are the host catalogue, the SDK catalogue or the packers)', () => {
    expect(Object.keys(ERROR_CATALOG).filter((c) => !/^[a-z]/.test(c))).toEqual([]);
  });

  it('shares no code with the SDK catalogue', () => {
    expect(Object.keys(SDK_SHARED_ERRORS).filter(isErrorCode)).toEqual([]);
  });

  it('shares no code with the packaging catalogue, whose codes all start with PACK_', () => {
    expect(Object.keys(PACK_ERRORS).filter((c) => isErrorCode(c) || c in SDK_SHARED_ERRORS)).toEqual([]);
    expect(Object.keys(PACK_ERRORS).filter((c) => !c.startsWith('PACK_'))).toEqual([]);
  });

  it('has the three field issue codes of every domain', () => {
    for (const domain of Object.keys(VALIDATION_DOMAINS)) {
      for (const kind of ['required', 'invalid', 'unknown']) expect(isErrorCode(`${domain}.field.${kind}`)).toBe(true);
    }
    expect(Object.keys(FIELD_ISSUE_ERRORS).every((c) => !c.startsWith('manifest.'))).toBe(true);
  });

  it("leaves the field issues of the host's own request bodies (admin and console APIs) to the host's catalogue", () => {
    expect(Object.keys(FIELD_ISSUE_ERRORS).filter((c) => /^(request|console)\./.test(c))).toEqual([]);
  });
});

describe('toValidationIssues', () => {
  const Doc = z.strictObject({
    pluginId: z.string().regex(/^[a-z.]+$/),
    protocolVersion: z.literal(2),
    permissions: z.array(z.enum(['log.write'])),
    name: z.string(),
    count: z.number().superRefine((n, ctx) => {
      if (n > 1) ctx.addIssue({ code: 'custom', message: 'too many', params: { code: 'made.up.code' } });
    }),
  });
  const input = { pluginId: 'Bad Id', protocolVersion: 3, permissions: ['nope'], count: 2, extra: true };
  const issuesOf = (domain: ValidationDomain) => {
    const r = Doc.safeParse(input, { reportInput: true });
    if (r.success) throw new Error('expected a failure');
    return toValidationIssues(r.error, domain);
  };

  it.each(Object.keys(VALIDATION_DOMAINS) as ValidationDomain[])('gives only catalogued codes for the %s domain', (domain) => {
    const issues = issuesOf(domain);
    expect(issues.length).toBeGreaterThanOrEqual(6);
    expect(issues.filter((i) => !isErrorCode(i.code))).toEqual([]);
  });

  it('gives manifest codes for the special fields of a manifest only', () => {
    const codes = (domain: ValidationDomain) => Object.fromEntries(issuesOf(domain).map((i) => [i.path, i.code]));
    expect(codes('manifest')).toMatchObject({
      pluginId: 'manifest.pluginId.invalid',
      protocolVersion: 'manifest.protocolVersion.unsupported',
      'permissions[0]': 'manifest.permissions.unknown',
      name: 'manifest.field.required',
      extra: 'manifest.field.unknown',
    });
    expect(codes('params')).toMatchObject({
      pluginId: 'params.field.invalid',
      protocolVersion: 'params.field.invalid',
      'permissions[0]': 'params.field.invalid',
      name: 'params.field.required',
      extra: 'params.field.unknown',
    });
  });

  it('keeps a custom refinement code only when it is a catalogued code of the domain', () => {
    expect(issuesOf('settings').find((i) => i.path === 'count')?.code).toBe('settings.field.invalid');
    const Checked = z
      .string()
      .superRefine((_v, ctx) => ctx.addIssue({ code: 'custom', message: 'dup', params: issueParams('manifest.commands.duplicate') }));
    const r = Checked.safeParse('x');
    if (r.success) throw new Error('expected a failure');
    expect(toValidationIssues(r.error, 'manifest')[0]?.code).toBe('manifest.commands.duplicate');
    expect(toValidationIssues(r.error, 'event')[0]?.code).toBe('event.field.invalid');
  });

  it('takes only catalogued domains and codes (checked by the type checker)', () => {
    const r = z.string().safeParse(1);
    if (r.success) throw new Error('expected a failure');
    // @ts-expect-error 'vector' is not a validation domain, so its codes would not be in the catalogue
    expect(toValidationIssues(r.error, 'vector')[0]?.code).toBe('vector.field.invalid');
    // @ts-expect-error an uncatalogued code cannot be given to a refinement
    expect(issueParams('manifest.made_up')).toEqual({ code: 'manifest.made_up' });
  });
});
