import { ADMIN_ROUTES, type EventLogsResponse, type EventPluginLogs } from '@host/admin-api';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { call } from '../api';
import { formatTimeOfDay } from '../i18n';
import { ErrorNotice } from './ErrorNotice';

/** Lines asked for per plugin; the host keeps the newest and says when it left older ones out. */
const LINES_PER_PLUGIN = 200;

/**
 * The log lines each plugin's handler wrote for one event (GET /api/events/{eventId}/logs), read while the
 * event is open and again when its record changes (`version`), since a handler may still be writing.
 */
export function useEventLogs(eventId: string, open: boolean, version: string) {
  return useQuery({
    queryKey: ['eventLogs', eventId, version],
    queryFn: () => call<EventLogsResponse>(ADMIN_ROUTES.eventLogs, { params: { eventId }, query: { limit: String(LINES_PER_PLUGIN) } }),
    enabled: open,
    staleTime: Infinity,
  });
}

/** One plugin's lines for the event: time, level, message and fields, as text (nothing a plugin logs becomes markup). */
export function EventLogLines({ logs, loading }: { logs: EventPluginLogs | undefined; loading: boolean }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language === 'zh' ? 'zh' : 'en';
  if (loading) return <p className="hint">{t('events.logs.loading')}</p>;
  if (!logs) return <p className="hint">{t('events.logs.none')}</p>;
  if (!logs.kept) return <p className="hint">{t('events.logs.http')}</p>;
  if (logs.lines.length === 0) return <p className="hint">{t('events.logs.none')}</p>;
  return (
    <>
      {logs.truncated ? <p className="hint">{t('events.logs.truncated', { count: logs.lines.length })}</p> : null}
      <ol className="event-logs" aria-label={t('events.logs.label', { pluginId: logs.pluginId })}>
        {logs.lines.map((l, i) => (
          <li key={`${l.at}-${i}`} className={`log-line level-${l.level}`}>
            <time dateTime={l.at}>{formatTimeOfDay(l.at, lng)}</time> <span className="log-level">{l.level}</span>{' '}
            <span className="log-message">{l.message}</span>
            {l.fields && Object.keys(l.fields).length > 0 ? (
              <>
                {' '}
                <code className="log-fields">{JSON.stringify(l.fields)}</code>
              </>
            ) : null}
          </li>
        ))}
      </ol>
    </>
  );
}

/** What the event's log lines could not be read for, in place of every plugin's lines. */
export function EventLogsError({ error }: { error: unknown }) {
  const { t } = useTranslation();
  return <ErrorNotice error={error} title={t('events.logs.failed')} />;
}
