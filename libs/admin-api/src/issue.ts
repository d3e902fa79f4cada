import { ERROR_CATALOG } from '@host/protocol';
import { z } from 'zod';

/** Every code of the error catalogue, for the schemas that carry one. */
export const ERROR_CODES = Object.keys(ERROR_CATALOG) as [string, ...string[]];

/** One validation problem: `{code, path, message}`. */
export const IssueSchema = z.object({
  code: z.enum(ERROR_CODES).describe('Stable code of the error catalogue, e.g. manifest.field.required or request.field.invalid.'),
  path: z.string().describe('The field, e.g. commands[0].name; "" is the whole document.'),
  message: z.string().describe('What is wrong with the field and the fix.'),
});
export type Issue = z.infer<typeof IssueSchema>;
