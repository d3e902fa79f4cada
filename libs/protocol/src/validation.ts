import type { z } from 'zod';
import { FIELD_ISSUE_ERRORS, MANIFEST_ERRORS, type FieldIssueCode, type IssueCode, type ValidationDomain } from './error-codes';

/**
 * One validation failure, as data: a stable code, where, and what to do. The
 * code is one of the catalogue (a field issue of some domain or a manifest
 * code), so no issue can carry a code the catalogue lacks.
 */
export interface ValidationIssue {
  code: IssueCode;
  /** Field path in dotted form with indexes, e.g. `commands[0].prefixes`; "" is the document. */
  path: string;
  message: string;
}

/** A validation issue of a domain declared outside the protocol (the host's own request bodies), whose catalogue holds its field codes. */
export type DomainValidationIssue<D extends string> = Omit<ValidationIssue, 'code'> & { code: IssueCode | FieldIssueCode<D> };

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** `['commands', 0, 'name']` -> `commands[0].name`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const s = String(seg);
      out += /^[A-Za-z_$][\w$]*$/.test(s) ? (out ? `.${s}` : s) : `[${JSON.stringify(s)}]`;
    }
  }
  return out;
}

function describeInput(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  return typeof input === 'object' ? 'an object' : `${typeof input} ${JSON.stringify(input)}`;
}

const TYPE_NAMES: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeName(expected: string): string {
  return TYPE_NAMES[expected] ?? expected;
}

/** Plain words for zod's size, format, key and union issues. */
function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = Number(small ? issue.minimum : issue.maximum);
      const word = small ? (issue.inclusive ? 'at least' : 'more than') : issue.inclusive ? 'at most' : 'less than';
      if (issue.origin === 'string') return `must be ${word} ${bound} character${bound === 1 ? '' : 's'} long`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have ${word} ${bound} item${bound === 1 ? '' : 's'}`;
      return `must be ${word} ${bound}`;
    }
    case 'invalid_key':
      return `is not an allowed key: ${issue.issues.map((i) => i.message).join('; ')}`;
    case 'invalid_union':
      return 'matches none of the allowed shapes; check its "type" and fields against the schema';
    default:
      return issue.message.replace(/^Invalid input: /, '');
  }
}

const ISSUE_CODES: ReadonlySet<string> = new Set([...Object.keys(MANIFEST_ERRORS), ...Object.keys(FIELD_ISSUE_ERRORS)]);

/**
 * The `params` of a custom zod refinement whose issue gets its own code
 * instead of `<domain>.field.invalid`: `ctx.addIssue({code: 'custom', ...,
 * params: issueParams('manifest.commands.duplicate')})`. Only catalogued codes
 * type-check.
 */
export function issueParams(code: IssueCode): { code: IssueCode } {
  return { code };
}

/** A custom refinement's own code (`params.code`): used when it is a catalogued code of this domain. */
function customCode(issue: z.core.$ZodIssue, domain: string): IssueCode | undefined {
  const code = (issue as { params?: { code?: unknown } }).params?.code;
  return typeof code === 'string' && ISSUE_CODES.has(code) && code.startsWith(`${domain}.`) ? (code as IssueCode) : undefined;
}

/**
 * Turns zod issues into ValidationIssues whose text names the field and the
 * fix. `domain` prefixes the field codes (`manifest.field.required`,
 * `params.field.invalid`, ...: each in the catalogue; a domain of the host's
 * own, such as the admin API's `request`, has its codes in the host's
 * catalogue); manifests also get codes for their special fields
 * (`manifest.pluginId.invalid`, ...), and custom refinements carry their own
 * manifest code in `params.code`.
 */
export function toValidationIssues(error: z.ZodError, domain: ValidationDomain): ValidationIssue[];
/** The same for a domain of `domains`, a family of domains declared elsewhere (the host's own request bodies). */
export function toValidationIssues<const T extends Readonly<Record<string, string>>, D extends keyof T & string>(
  error: z.ZodError,
  domain: D,
  domains: T,
): DomainValidationIssue<D>[];
export function toValidationIssues<D extends string>(
  error: z.ZodError,
  domain: D,
  domains?: Readonly<Record<string, string>>,
): DomainValidationIssue<D>[] {
  if (domains && !Object.prototype.hasOwnProperty.call(domains, domain))
    throw new Error(`"${domain}" is not one of the given validation domains`);
  const out: DomainValidationIssue<D>[] = [];
  const manifest = domain === 'manifest';
  for (const issue of error.issues) {
    const where = formatPath(issue.path);
    const field = where ? `"${where}"` : 'the document';
    const input = (issue as { input?: unknown }).input;
    // zod 4 reports the offending value only when parsing with `reportInput`;
    // without it, tell a missing field from a wrong type by zod's message.
    const reported = 'input' in issue;
    const received = reported ? describeInput(input) : (/received (\w+)$/.exec(issue.message)?.[1] ?? 'another type');
    switch (issue.code) {
      case 'custom': {
        const code = customCode(issue, domain) ?? `${domain}.field.invalid`;
        out.push({ code, path: where, message: `${field}: ${issue.message}` });
        break;
      }
      case 'invalid_type':
        if (reported ? input === undefined : received === 'undefined') {
          out.push({
            code: `${domain}.field.required`,
            path: where,
            message: `${field} is required: add it (${typeName(issue.expected)}).`,
          });
        } else {
          out.push({
            code: `${domain}.field.invalid`,
            path: where,
            message: `${field} must be ${typeName(issue.expected)}, not ${received}.`,
          });
        }
        break;
      case 'unrecognized_keys':
        for (const key of issue.keys) {
          const p = formatPath([...issue.path, key]);
          out.push({
            code: `${domain}.field.unknown`,
            path: p,
            message: `"${p}" is not a protocol v2 field: remove it or check its spelling.`,
          });
        }
        break;
      case 'invalid_value': {
        const allowed = issue.values.map((v) => JSON.stringify(v)).join(', ');
        const code: IssueCode | FieldIssueCode<D> =
          manifest && where === 'protocolVersion'
            ? 'manifest.protocolVersion.unsupported'
            : manifest && /^permissions\[\d+\]$/.test(where)
              ? 'manifest.permissions.unknown'
              : `${domain}.field.invalid`;
        out.push({
          code,
          path: where,
          message:
            issue.values.length === 1
              ? `${field} must be ${allowed}, not ${received}.`
              : `${field} must be one of ${allowed}; got ${received}.`,
        });
        break;
      }
      case 'invalid_format':
      case 'too_small':
      case 'too_big':
      case 'not_multiple_of':
      default: {
        // A pluginId of the right type but the wrong form or length gets its own code.
        const code: IssueCode | FieldIssueCode<D> =
          manifest && where === 'pluginId' && (issue.code === 'invalid_format' || issue.code === 'too_big')
            ? 'manifest.pluginId.invalid'
            : `${domain}.field.invalid`;
        out.push({ code, path: where, message: `${field} ${describeIssue(issue)}.`.replace(/\.\.$/, '.') });
      }
    }
  }
  return out;
}

/** Parses `input` with `schema`, returning data instead of throwing. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, domain: ValidationDomain): ValidationResult<z.output<S>> {
  // `reportInput` turns off zod's compiled fast path, so valid input (the
  // common case, on the message hot path too) is parsed without it and only
  // a failure is parsed again to name the offending values.
  const fast = schema.safeParse(input);
  if (fast.success) return { ok: true, value: fast.data };
  const r = schema.safeParse(input, { reportInput: true });
  return r.success ? { ok: true, value: r.data } : { ok: false, issues: toValidationIssues(r.error, domain) };
}
