import { z } from 'zod';
import { ERROR_CODES, IssueSchema } from './issue';
import { PendingUpdateSchema } from './packages';

/** `details` of an error body: always an object; validation failures in `issues`. */
export const ErrorDetailsSchema = z
  .looseObject({ issues: z.array(IssueSchema).optional().describe('Validation failures, one per field.') })
  .describe('Specifics as an object: validation failures in issues; the entry, the limit or the URL beside it.');

/** The body of every failed admin API request. */
export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES).describe('Stable error code; see the error catalogue.'),
    message: z.string().describe('What went wrong and what to do.'),
    details: ErrorDetailsSchema.optional(),
  }),
  pendingUpdate: PendingUpdateSchema.optional().describe('Present with UPDATE_CONFIRMATION_REQUIRED.'),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
