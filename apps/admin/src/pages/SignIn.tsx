import { useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { ApiError } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { LanguageSwitch } from '../components/LanguageSwitch';
import { useSession, type SignedOutReason } from '../session';

export function SignInPage({ reason }: { reason?: SignedOutReason }) {
  const { t } = useTranslation();
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
      <div className="sign-in-language">
        <LanguageSwitch />
      </div>
      <h1>{t('signIn.title')}</h1>
      {reason && !error && (
        <p className="notice" role="status">
          {t(`signIn.reason.${reason}`)}
        </p>
      )}
      <form onSubmit={(e) => void submit(e)}>
        <label htmlFor={tokenId}>{t('signIn.token')}</label>
        <input id={tokenId} name="token" type="password" autoComplete="current-password" required spellCheck={false} />
        <p className="hint">
          <Trans i18nKey="signIn.tokenHint" components={{ code: <code /> }} />
        </p>
        <button type="submit" disabled={busy}>
          {busy ? t('signIn.signingIn') : t('signIn.submit')}
        </button>
      </form>
      {error !== undefined && (
        <ErrorNotice
          error={error}
          title={error instanceof ApiError && error.code === 'SESSION_TOKEN_INVALID' ? t('signIn.wrongToken') : undefined}
        />
      )}
    </main>
  );
}
