import { ADMIN_ROUTES, type LogsResponse } from '@host/admin-api';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { apiPath } from '../api';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];
type Line = LogsResponse['lines'][number];

/** Lines kept in the page; older ones drop off the top. */
export const MAX_LOG_LINES = 2000;

/**
 * A plugin's log that follows new lines as they are written (Server-Sent
 * Events from GET /api/plugins/{id}/logs/stream), with a minimum level and a
 * search. Lines are text: nothing a plugin logs becomes markup.
 */
export function LogView({ pluginId }: { pluginId: string }) {
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
    return all.filter((l) => LEVELS.indexOf(l.level) >= min && (!needle || l.message.toLowerCase().includes(needle)));
  }, [all, level, search]);
  useEffect(() => {
    const box = boxRef.current;
    if (follow && box) box.scrollTop = box.scrollHeight;
  }, [lines, follow]);

  return (
    <div className="logs">
      <div className="log-controls">
        <div>
          <label htmlFor={levelId}>Level at least</label>
          <select id={levelId} value={level} onChange={(e) => setLevel(e.target.value as Level)}>
            {LEVELS.map((l) => (
              <option key={l}>{l}</option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={searchId}>Search</label>
          <input id={searchId} type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </div>
        <label className="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Scroll to new lines
        </label>
      </div>
      <p className="muted" role="status">
        {connection === 'live'
          ? 'Following new lines as they are written.'
          : connection === 'connecting'
            ? 'Connecting…'
            : 'Connection lost; reconnecting…'}
      </p>
      <div className="log-box" ref={boxRef} tabIndex={0} role="log" aria-label={`Log of ${pluginId}`} aria-live="off">
        {lines.length === 0 && <p className="muted">{all.length ? 'No line matches.' : 'No log lines yet.'}</p>}
        {lines.map((l, i) => (
          <div key={`${l.at}-${i}`} className={`log-line level-${l.level}`}>
            <time dateTime={l.at}>{l.at.slice(11, 23)}</time> <span className="log-level">{l.level}</span>{' '}
            <span className="log-stream">{l.stream}</span> <span className="log-message">{l.message}</span>
          </div>
        ))}
      </div>
    </div>
  );
}
