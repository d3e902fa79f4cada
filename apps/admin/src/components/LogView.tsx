import { ADMIN_ROUTES, type LogsResponse } from '@host/admin-api';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { apiPath } from '../api';
import { formatTimeOfDay } from '../i18n';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];
type Line = LogsResponse['lines'][number];

/** Lines kept in the page; older ones drop off the top. */
export const MAX_LOG_LINES = 2000;

/**
 * A plugin's log that follows new lines as they are written (Server-Sent
 * Events from GET /api/plugins/{id}/logs/stream), with a minimum level and a
 * search. Lines are text: nothing a plugin logs becomes markup. An HTTP
 * plugin's own output never reaches the host (the service keeps it), so its
 * log holds only what the host noted about its answers: the empty log says so.
 */
export function LogView({ pluginId, transport = 'stdio-jsonrpc' }: { pluginId: string; transport?: 'stdio-jsonrpc' | 'http' }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language === 'zh' ? 'zh' : 'en';
  const [level, setLevel] = useState<Level>('trace');
  const [search, setSearch] = useState('');
  const [follow, setFollow] = useState(true);
  const [all, setAll] = useState<Line[]>([]);
  const [connection, setConnection] = useState<'connecting' | 'live' | 'retrying'>('connecting');
  const levelId = useId();
  const searchId = useId();
  const boxRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const source = new EventSource(apiPath(ADMIN_ROUTES.followPluginLogs, { pluginId }, { tail: '500' }));
    // Each (re)connection starts again with the tail.
    source.onopen = () => {
      setAll([]);
      setConnection('live');
    };
    source.onerror = () => setConnection('retrying');
    source.addEventListener('line', (e) => {
      const line = JSON.parse((e as MessageEvent<string>).data) as Line;
      setAll((lines) => (lines.length >= MAX_LOG_LINES ? [...lines.slice(lines.length - MAX_LOG_LINES + 1), line] : [...lines, line]));
    });
    return () => source.close();
  }, [pluginId]);

  const lines = useMemo(() => {
    const min = LEVELS.indexOf(level);
    const needle = search.trim().toLowerCase();
    // Fields and the event id are searched too: an event id finds the lines its handler wrote.
    const text = (l: Line) => `${l.message} ${l.fields ? JSON.stringify(l.fields) : ''} ${l.eventId ?? ''}`.toLowerCase();
    return all.filter((l) => LEVELS.indexOf(l.level) >= min && (!needle || text(l).includes(needle)));
  }, [all, level, search]);
  useEffect(() => {
    const box = boxRef.current;
    if (follow && box) box.scrollTop = box.scrollHeight;
  }, [lines, follow]);

  return (
    <div className="logs">
      <div className="log-controls">
        <div>
          <label htmlFor={levelId}>{t('log.level')}</label>
          <select id={levelId} value={level} onChange={(e) => setLevel(e.target.value as Level)}>
            {LEVELS.map((l) => (
              <option key={l}>{l}</option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={searchId}>{t('log.search')}</label>
          <input id={searchId} type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </div>
        <label className="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> {t('log.follow')}
        </label>
      </div>
      <p className="muted" role="status">
        {t(`log.connection.${connection}`)}
      </p>
      <div className="log-box" ref={boxRef} tabIndex={0} role="log" aria-label={t('log.label', { pluginId })} aria-live="off">
        {lines.length === 0 && (
          <p className="muted">{all.length ? t('log.noMatch') : transport === 'http' ? t('log.emptyHttp') : t('log.empty')}</p>
        )}
        {lines.map((l, i) => (
          <div key={`${l.at}-${i}`} className={`log-line level-${l.level}`}>
            <time dateTime={l.at}>{formatTimeOfDay(l.at, lng)}</time> <span className="log-level">{l.level}</span>{' '}
            <span className="log-stream">{l.stream}</span> <span className="log-message">{l.message}</span>
            {l.fields && Object.keys(l.fields).length > 0 ? (
              <>
                {' '}
                <code className="log-fields">{JSON.stringify(l.fields)}</code>
              </>
            ) : null}
          </div>
        ))}
      </div>
    </div>
  );
}
