import { ADMIN_ROUTES, type SessionResponse, type SessionView, type SignInResponse, type SignOutResponse } from '@host/admin-api';
import { HostError } from '@host/host-core';
import { implementRoute, jsonBody, type RouteDef } from '@host/host-routes';
import { isAdminToken } from '../auth';
import type { AuthThrottle } from '../auth-throttle';
import { checkSameOrigin, setSessionCookie, type SessionStore } from '../session';

/** Sign-in, the current session and sign-out of the admin app. */
export function sessionRoutes(deps: {
  sessions: SessionStore;
  adminTokenHash: string;
  throttle: AuthThrottle;
}): RouteDef<unknown, unknown>[] {
  const { sessions } = deps;
  return [
    implementRoute(
      ADMIN_ROUTES.signIn,
      async ({ req, res, body }) => {
        // A page of another site must not sign the browser in to a session of its choosing.
        checkSameOrigin(req);
        // Throttled per client address: one client guessing does not lock the operator out of another.
        const address = req.socket.remoteAddress;
        if (deps.throttle.throttled(address, 'sign-in')) throw new HostError('SESSION_SIGN_IN_THROTTLED');
        if (!isAdminToken(body.token, deps.adminTokenHash)) {
          deps.throttle.failed(address, 'sign-in');
          throw new HostError('SESSION_TOKEN_INVALID');
        }
        const { id, view } = await sessions.create();
        setSessionCookie(req, res, id, sessions.lifetimeSeconds);
        const answer: SignInResponse = { session: view };
        return { status: 201, body: answer };
      },
      { before: [jsonBody({ limit: '16kb' })] },
    ),
    implementRoute(ADMIN_ROUTES.getSession, async ({ res }) => {
      const current = res.locals['adminSession'] as { view: SessionView } | undefined;
      const answer: SessionResponse = current
        ? { authenticatedBy: 'session', session: current.view }
        : { authenticatedBy: 'bearer', session: null };
      return { body: answer };
    }),
    implementRoute(ADMIN_ROUTES.signOut, async ({ req, res }) => {
      const current = res.locals['adminSession'] as { id: string } | undefined;
      const answer: SignOutResponse = { signedOut: current ? await sessions.end(current.id) : false };
      if (current) setSessionCookie(req, res, '', 0);
      return { body: answer };
    }),
  ];
}
