import type { z } from 'zod';

/** One validation failure, as data: a stable code, where, and what to do. */
export interface ValidationIssue {
  code: string;
  /** Field path in dotted form with indexes, e.g. `commands[0].prefixes`; "" is the document. */
  path: string;
  message: string;
}

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

/**
 * Turns zod issues into ValidationIssues whose text names the field and the
 * fix. `domain` prefixes generic codes (`manifest.field.required`, ...);
 * custom refinements carry their own code in `params.code`.
 */
export function toValidationIssues(error: z.ZodError, domain: string): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of error.issues) {
    const where = formatPath(issue.path);
    const field = where ? `"${where}"` : 'the document';
    const input = (issue as { input?: unknown }).input;
    switch (issue.code) {
      case 'custom': {
        const code = (issue.params as { code?: string } | undefined)?.code ?? `${domain}.field.invalid`;
        out.push({ code, path: where, message: `${field}: ${issue.message}` });
        break;
      }
      case 'invalid_type':
        if (input === undefined) {
          out.push({ code: `${domain}.field.required`, path: where, message: `${field} is required: add it (${issue.expected}).` });
        } else {
          out.push({
            code: `${domain}.field.invalid`,
            path: where,
            message: `${field} must be ${issue.expected}, not ${describeInput(input)}.`,
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
        const code =
          where === 'protocolVersion'
            ? `${domain}.protocolVersion.unsupported`
            : /^permissions\[\d+\]$/.test(where)
              ? `${domain}.permissions.unknown`
              : `${domain}.field.invalid`;
        out.push({
          code,
          path: where,
          message:
            issue.values.length === 1
              ? `${field} must be ${allowed}, not ${describeInput(input)}.`
              : `${field} must be one of ${allowed}; got ${describeInput(input)}.`,
        });
        break;
      }
      case 'invalid_format':
      case 'too_small':
      case 'too_big':
      case 'not_multiple_of':
      default: {
        const code = where === 'pluginId' && issue.code === 'invalid_format' ? `${domain}.pluginId.invalid` : `${domain}.field.invalid`;
        out.push({ code, path: where, message: `${field} ${issue.message.replace(/^Invalid input: /, '')}.`.replace(/\.\.$/, '.') });
      }
    }
  }
  return out;
}

/** Parses `input` with `schema`, returning data instead of throwing. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, domain: string): ValidationResult<z.output<S>> {
  const r = schema.safeParse(input);
  return r.success ? { ok: true, value: r.data } : { ok: false, issues: toValidationIssues(r.error, domain) };
}
