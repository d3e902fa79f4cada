import { HttpManifestSchema, type HttpManifest } from './http-manifest';
import { parseJsonWithin } from './json-shape';
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

/**
 * Parses manifest text; a syntax error becomes a `manifest.json.invalid` issue, nesting or width beyond the
 * JSON limits a `manifest.json.too_complex` one.
 */
export function parseManifestText(text: string): { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] } {
  const parsed = parseJsonWithin(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  if (parsed.ok) return parsed;
  if (parsed.reason === 'shape') {
    return { ok: false, issues: [{ code: 'manifest.json.too_complex', path: '', message: `manifest.json is refused: ${parsed.message}` }] };
  }
  return {
    ok: false,
    issues: [{ code: 'manifest.json.invalid', path: '', message: `manifest.json is not valid JSON: ${parsed.message}` }],
  };
}
