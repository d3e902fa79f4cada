import { HttpManifestSchema, type HttpManifest } from './http-manifest';
import { StdioManifestSchema, type StdioManifest } from './manifest';
import { validate, type ValidationIssue, type ValidationResult } from './validation';

/**
 * Validates a parsed `manifest.json` of a stdio package. Issue codes are the
 * `manifest.*` codes of the error catalogue.
 */
export function parseStdioManifest(input: unknown): ValidationResult<StdioManifest> {
  return validate(StdioManifestSchema, input, 'manifest') as ValidationResult<StdioManifest>;
}

/** Validates the manifest an HTTP plugin serves at GET /host/plugin/manifest. */
export function parseHttpManifest(input: unknown): ValidationResult<HttpManifest> {
  return validate(HttpManifestSchema, input, 'manifest');
}

/** Parses manifest text; a syntax error becomes a `manifest.json.invalid` issue. */
export function parseManifestText(text: string): { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] } {
  try {
    return { ok: true, value: JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) };
  } catch (e) {
    return {
      ok: false,
      issues: [{ code: 'manifest.json.invalid', path: '', message: `manifest.json is not valid JSON: ${(e as Error).message}` }],
    };
  }
}
