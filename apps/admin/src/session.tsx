import { ADMIN_ROUTES, type SessionResponse, type SignInResponse } from '@host/admin-api';
import { useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { ApiError, call, onSignedOut, setCsrfToken } from './api';

/**
 * Why the sign-in page shows: the operator signed out here, the session ended
 * (its idle or total time ran out), or a request went without the cookie
 * (another tab signed out, or it was removed). The page says it in the app's language.
 */
export type SignedOutReason = 'signedOut' | 'expired' | 'elsewhere';

export type SessionState =
  | { status: 'loading' }
  | { status: 'signedOut'; reason?: SignedOutReason }
  | { status: 'signedIn'; expiresAt: string; idleTimeoutSeconds: number };

interface SessionApi {
  state: SessionState;
  signIn(token: string): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionApi | undefined>(undefined);

/**
 * The admin session: the token typed at sign-in goes to POST /api/session once
 * and is dropped; the browser keeps the HttpOnly cookie, this module only the
 * CSRF token.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'loading' });
  const queryClient = useQueryClient();

  useEffect(() => {
    let cancelled = false;
    call<SessionResponse>(ADMIN_ROUTES.getSession).then(
      (r) => {
        if (cancelled) return;
        if (r.session) {
          setCsrfToken(r.session.csrfToken);
          setState({ status: 'signedIn', expiresAt: r.session.expiresAt, idleTimeoutSeconds: r.session.idleTimeoutSeconds });
        } else setState({ status: 'signedOut' });
      },
      (e: unknown) => {
        if (cancelled) return;
        const ended = e instanceof ApiError && e.code === 'SESSION_EXPIRED';
        setState({ status: 'signedOut', reason: ended ? 'expired' : undefined });
      },
    );
    return () => {
      cancelled = true;
    };
  }, []);

  useEffect(
    () =>
      onSignedOut((e) => {
        setCsrfToken(undefined);
        queryClient.clear();
        setState({ status: 'signedOut', reason: e.code === 'SESSION_EXPIRED' ? 'expired' : 'elsewhere' });
      }),
    [queryClient],
  );

  const signIn = useCallback(async (token: string) => {
    const r = await call<SignInResponse>(ADMIN_ROUTES.signIn, { body: { token } });
    setCsrfToken(r.session.csrfToken);
    setState({ status: 'signedIn', expiresAt: r.session.expiresAt, idleTimeoutSeconds: r.session.idleTimeoutSeconds });
  }, []);

  const signOut = useCallback(async () => {
    try {
      await call(ADMIN_ROUTES.signOut);
    } catch (e) {
      if (!(e instanceof ApiError && e.signedOut)) throw e;
    }
    setCsrfToken(undefined);
    queryClient.clear();
    setState({ status: 'signedOut', reason: 'signedOut' });
  }, [queryClient]);

  return <SessionContext.Provider value={{ state, signIn, signOut }}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}
