import { z } from 'zod';

/** One validation problem: `{code, path, message}`. */
export const IssueSchema = z.object({ code: z.string(), path: z.string(), message: z.string() });
export type Issue = z.infer<typeof IssueSchema>;
