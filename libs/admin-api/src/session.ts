import { z } from 'zod';

/** Name of the HttpOnly cookie that carries an admin session id. */
export const SESSION_COOKIE = 'host_admin_session';
/** Header that carries the session's CSRF token on requests that change something. */
export const CSRF_HEADER = 'X-CSRF-Token';

/** Body of POST /session: the admin token, exchanged for a session cookie. */
export const SignInBodySchema = z.strictObject({
  token: z.string().min(1).max(1024).describe('The admin token (printed at the first start, or the one in HOST_ADMIN_TOKEN_FILE).'),
});
export type SignInBody = z.infer<typeof SignInBodySchema>;

export const SessionViewSchema = z.object({
  csrfToken: z.string().describe('Send it as the X-CSRF-Token header on every request that changes something.'),
  createdAt: z.string(),
  expiresAt: z.string().describe('When the session ends at the latest, however active it is.'),
  idleTimeoutSeconds: z.number().int().describe('The session ends after this long without a request.'),
});
export type SessionView = z.infer<typeof SessionViewSchema>;

export const SignInResponseSchema = z.object({ session: SessionViewSchema });
export type SignInResponse = z.infer<typeof SignInResponseSchema>;

export const SessionResponseSchema = z.object({
  authenticatedBy: z.enum(['session', 'bearer']),
  session: SessionViewSchema.nullable().describe('The session of the cookie; null for a request with a bearer token.'),
});
export type SessionResponse = z.infer<typeof SessionResponseSchema>;

export const SignOutResponseSchema = z.object({
  signedOut: z.boolean().describe('Whether a session ended (false for a bearer-token request, which has none).'),
});
export type SignOutResponse = z.infer<typeof SignOutResponseSchema>;
