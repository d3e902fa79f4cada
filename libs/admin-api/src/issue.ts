import { HOST_ERROR_CATALOG } from '@host/host-errors';
import { z } from 'zod';

/** Every code of the host's error catalogue (wire codes and the host's own), for the schemas that carry one. */
export const ERROR_CODES = Object.keys(HOST_ERROR_CATALOG) as [string, ...string[]];

/** One validation problem: `{code, path, message}`. */
export const IssueSchema = z.object({
  code: z.enum(ERROR_CODES).describe('Stable code of the error catalogue, e.g. manifest.field.required or request.field.invalid.'),
  path: z.string().describe('The field, e.g. commands[0].name; "" is the whole document.'),
  message: z.string().describe('What is wrong with the field and the fix.'),
});
export type Issue = z.infer<typeof IssueSchema>;
