import { ERROR_CATALOG } from '@host/protocol';
import { z } from 'zod';
import { PendingUpdateSchema } from './packages';

const ERROR_CODES = Object.keys(ERROR_CATALOG) as [string, ...string[]];

/** The body of every failed admin API request. */
export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES).describe('Stable error code; see the error catalogue.'),
    message: z.string().describe('What went wrong and what to do.'),
    details: z.unknown().optional().describe('Specifics: the entry, the limit, validation issues...'),
  }),
  pendingUpdate: PendingUpdateSchema.optional().describe('Present with UPDATE_CONFIRMATION_REQUIRED.'),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
