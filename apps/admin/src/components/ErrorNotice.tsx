import { ERROR_CATALOG } from '@host/protocol';
import { ApiError } from '../api';

/** What to do about a catalogue code, when the message itself did not already say it. */
export function catalogueFix(code: string, message: string): string | undefined {
  const entry = (ERROR_CATALOG as Record<string, { message: string } | undefined>)[code];
  return entry && entry.message !== message ? entry.message : undefined;
}

/** An admin API failure as the operator reads it: what happened, the fix from the error catalogue, each field's problem. */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  const e =
    error instanceof ApiError ? error : new ApiError(0, 'INTERNAL', error instanceof Error ? error.message : 'Something went wrong.');
  const fix = catalogueFix(e.code, e.message);
  return (
    <div className="error" role="alert">
      <p className="error-title">
        <strong>{title ?? 'Failed'}</strong> <code>{e.code}</code>
      </p>
      <p>{e.message}</p>
      {fix && (
        <p>
          <span className="label">What to do: </span>
          {fix}
        </p>
      )}
      {e.issues.length > 0 && (
        <ul>
          {e.issues.map((i, n) => (
            <li key={n}>
              <code>{i.path || '(whole)'}</code>: {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
