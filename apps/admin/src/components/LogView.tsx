import { ADMIN_ROUTES, type LogsResponse } from '@host/admin-api';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { call } from '../api';
import { ErrorNotice } from './ErrorNotice';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

/**
 * A plugin's log that follows new lines as they arrive (the tail is read
 * again every second), with a minimum level and a search. Lines are text:
 * nothing a plugin logs becomes markup.
 */
export function LogView({ pluginId }: { pluginId: string }) {
  const [level, setLevel] = useState<Level>('trace');
  const [search, setSearch] = useState('');
  const [follow, setFollow] = useState(true);
  const levelId = useId();
  const searchId = useId();
  const boxRef = useRef<HTMLDivElement>(null);
  const q = useQuery({
    queryKey: ['plugin', pluginId, 'logs'],
    queryFn: () => call<LogsResponse>(ADMIN_ROUTES.pluginLogs, { params: { pluginId }, query: { tail: '500' } }),
    refetchInterval: follow ? 1000 : false,
  });
  const lines = useMemo(() => {
    const min = LEVELS.indexOf(level);
    const needle = search.trim().toLowerCase();
    return (q.data?.lines ?? []).filter((l) => LEVELS.indexOf(l.level) >= min && (!needle || l.message.toLowerCase().includes(needle)));
  }, [q.data, level, search]);
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
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow new lines
        </label>
      </div>
      {q.error && <ErrorNotice error={q.error} />}
      <div className="log-box" ref={boxRef} tabIndex={0} role="log" aria-label={`Log of ${pluginId}`} aria-live="off">
        {lines.length === 0 && <p className="muted">{q.data?.lines.length ? 'No line matches.' : 'No log lines yet.'}</p>}
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
