import { useId, useState, type FormEvent } from 'react';
import { ApiError } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useSession } from '../session';

export function SignInPage({ reason }: { reason?: string }) {
  const { signIn } = useSession();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const tokenId = useId();

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const input = e.currentTarget.elements.namedItem('token') as HTMLInputElement;
    setBusy(true);
    setError(undefined);
    try {
      await signIn(input.value.trim());
      // The token is not kept anywhere once exchanged.
      input.value = '';
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to the plugin host</h1>
      {reason && !error && (
        <p className="notice" role="status">
          {reason}
        </p>
      )}
      <form onSubmit={(e) => void submit(e)}>
        <label htmlFor={tokenId}>Admin token</label>
        <input id={tokenId} name="token" type="password" autoComplete="current-password" required spellCheck={false} />
        <p className="hint">
          The host printed it at its first start (&quot;Admin token: …&quot;), or it is the one in the file of HOST_ADMIN_TOKEN_FILE. The
          page keeps no copy: it is exchanged for a session cookie.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {error !== undefined && (
        <ErrorNotice
          error={error}
          title={error instanceof ApiError && error.code === 'SESSION_TOKEN_INVALID' ? 'Wrong token' : undefined}
        />
      )}
    </main>
  );
}
