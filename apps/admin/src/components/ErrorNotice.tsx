import { HOST_ERROR_CATALOG } from '@host/host-errors';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../api';

/** What to do about a catalogue code, when the message itself did not already say it. */
export function catalogueFix(code: string, message: string): string | undefined {
  const entry = (HOST_ERROR_CATALOG as Record<string, { message: string } | undefined>)[code];
  return entry && entry.message !== message ? entry.message : undefined;
}

/** The catalogue's own sentence of a code: the server's message says nothing more than it when they are equal. */
function catalogueMessage(code: string): string | undefined {
  return (HOST_ERROR_CATALOG as Record<string, { message: string } | undefined>)[code]?.message;
}

/**
 * An admin API failure as the operator reads it: the code as it is, the app's
 * own sentence for the codes it knows (in the chosen language) with the host's
 * particulars beside it, else the host's message and the catalogue's fix; each
 * field's problem.
 */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  const { t, i18n } = useTranslation();
  const e = error instanceof ApiError ? error : new ApiError(0, 'INTERNAL', error instanceof Error ? error.message : '');
  const known = i18n.exists(`errorCodes.${e.code}`);
  // The host's particulars (which plugin, which field) when its message says more than the catalogue's sentence.
  const particulars = e.message && e.message !== catalogueMessage(e.code) ? e.message : undefined;
  const fix = known ? undefined : catalogueFix(e.code, e.message);
  return (
    <div className="error" role="alert">
      <p className="error-title">
        <strong>{title ?? t('error.failed')}</strong> <code>{e.code}</code>
      </p>
      <p>{known ? t(`errorCodes.${e.code}`) : e.message}</p>
      {known && particulars && (
        <p className="error-particulars">
          <span className="label">{t('error.hostSaid')} </span>
          <span lang="en">{particulars}</span>
        </p>
      )}
      {fix && (
        <p>
          <span className="label">{t('error.whatToDo')} </span>
          <span lang="en">{fix}</span>
        </p>
      )}
      {e.issues.length > 0 && (
        <ul>
          {e.issues.map((i, n) => (
            <li key={n}>
              <code>{i.path || t('error.wholeValue')}</code>: <span lang="en">{i.message}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
