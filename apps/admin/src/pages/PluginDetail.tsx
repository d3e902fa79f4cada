import { ADMIN_ROUTES, type EventListResponse, type PluginDetail, type PluginResponse } from '@host/admin-api';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { call } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { CommandList, Facts, PermissionList } from '../components/Facts';
import { LogView } from '../components/LogView';
import { PluginActions } from '../components/PluginActions';
import { SettingsForm } from '../components/SettingsForm';
import { StateBadge } from '../components/StateBadge';

function when(at: string | undefined): string {
  return at ? new Date(at).toLocaleString() : '—';
}

function ms(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`;
}

/** How long ago an instant was, in whole seconds or minutes. */
function age(iso: string): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}

/** The plugin's event queue on this host: handling, waiting (and the oldest wait), expired and dropped. */
function QueueFacts({ queue }: { queue: PluginDetail['queue'] }) {
  if (!queue) return null;
  const oldest = queue.oldestWaitMilliseconds === null ? '' : `, the oldest for ${Math.round(queue.oldestWaitMilliseconds / 1000)} s`;
  return (
    <Facts
      rows={[
        ['Handling now', queue.active],
        ['Waiting', `${queue.waiting}${oldest}`],
        [
          'Expired',
          queue.expired === 0 ? '0' : <span className="warning">{queue.expired} (waited until they could no longer be answered)</span>,
        ],
        ['Dropped', queue.dropped],
      ]}
    />
  );
}

function Deliveries({ pluginId }: { pluginId: string }) {
  const q = useQuery({
    queryKey: ['plugin', pluginId, 'events'],
    queryFn: () => call<EventListResponse>(ADMIN_ROUTES.listEvents, { query: { pluginId, limit: '20' } }),
    refetchInterval: 3000,
  });
  if (q.error) return <ErrorNotice error={q.error} />;
  const rows = (q.data?.events ?? []).flatMap((e) =>
    e.deliveries
      .filter((d) => d.pluginId === pluginId)
      .map((d) => ({ e, d, replies: e.outbound.filter((o) => o.pluginId === pluginId).length })),
  );
  if (rows.length === 0) return <p className="muted">No deliveries yet. Send a message in the playground.</p>;
  return (
    <div className="table-scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">Received</th>
            <th scope="col">Text</th>
            <th scope="col">Command</th>
            <th scope="col">Decision</th>
            <th scope="col">Outcome</th>
            <th scope="col">Time</th>
            <th scope="col">Replies</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ e, d, replies }) => (
            <tr key={e.eventId}>
              <td>{when(e.receivedAt)}</td>
              <td>
                <span className="clip" title={e.event.message?.content ?? ''}>
                  {e.event.message?.content ?? ''}
                </span>
              </td>
              <td>{d.command ? <code>{d.command.name}</code> : <span className="muted">observed</span>}</td>
              <td>
                {d.error ? `refused: ${d.error.code}` : d.accepted ? (d.intercepted ? 'accepted, intercepted' : 'accepted') : d.state}
              </td>
              <td>
                {d.state === 'queued' ? `queued for ${age(d.startedAt)}` : d.state}
                {d.completion?.error ? `: ${d.completion.error.code} ${d.completion.error.message}` : ''}
              </td>
              <td>{ms(d.completion?.durationMs ?? d.durationMs)}</td>
              <td>{replies}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function PluginDetailPage() {
  const { pluginId = '' } = useParams();
  const q = useQuery({
    queryKey: ['plugin', pluginId],
    queryFn: () => call<PluginResponse>(ADMIN_ROUTES.getPlugin, { params: { pluginId } }),
    refetchInterval: 3000,
  });
  if (q.isPending) return <p role="status">Loading…</p>;
  if (q.error)
    return (
      <>
        <p>
          <Link to="/">← v2 plugins</Link>
        </p>
        <ErrorNotice error={q.error} />
      </>
    );
  const p = q.data.plugin;
  const r = p.runtime;
  return (
    <>
      <p>
        <Link to="/">← v2 plugins</Link>
      </p>
      <h1>{p.name ?? p.pluginId}</h1>
      <p className="muted">
        <code>{p.pluginId}</code> {p.version && `· ${p.version}`} {p.author && `· by ${p.author}`} ·{' '}
        {p.transport === 'http' ? 'HTTP' : 'stdio'}
      </p>
      <StateBadge plugin={p} />
      {p.description && <p>{p.description}</p>}
      <PluginActions plugin={p} />
      <div className="columns">
        <section aria-labelledby="runtime-title">
          <h2 id="runtime-title">Runtime</h2>
          <QueueFacts queue={p.queue} />
          <Facts
            rows={
              p.transport === 'http'
                ? [
                    ['Base URL', p.baseUrl ?? '—'],
                    ['Health', r?.health ?? '—'],
                    ['Last error', r?.lastError ?? '—'],
                  ]
                : [
                    ['Process id', r?.pid ?? '—'],
                    // What the plugin can reach: its own user, a sandbox, its network and limits (security.md, "Isolation modes").
                    ['Isolation', r?.isolation?.summary ?? '—'],
                    ['Started', when(r?.startedAt)],
                    [
                      'Last exit',
                      r?.lastExitAt
                        ? `${when(r.lastExitAt)} (code ${r.lastExitCode ?? '—'}, signal ${r.lastExitSignal ?? '—'}${
                            r.lastExitLimit ? `, over its ${r.lastExitLimit === 'cpu' ? 'CPU time' : 'memory'} limit` : ''
                          })`
                        : '—',
                    ],
                    ['Crashes', r?.crashCount ?? 0],
                    ['Next restart', when(r?.nextRestartAt)],
                    ['Last error', r?.lastError ?? '—'],
                    ['Package SHA-256', p.packageSha256 ? <code className="clip">{p.packageSha256}</code> : '—'],
                  ]
            }
          />
        </section>
        <section aria-labelledby="perm-title">
          <h2 id="perm-title">Permissions</h2>
          <PermissionList permissions={p.permissions ?? []} />
          <h2>Commands</h2>
          <CommandList commands={p.commands ?? []} />
        </section>
      </div>
      <section aria-labelledby="logs-title">
        <h2 id="logs-title">Log</h2>
        <LogView pluginId={p.pluginId} />
      </section>
      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Recent deliveries</h2>
        <Deliveries pluginId={p.pluginId} />
      </section>
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <SettingsForm pluginId={p.pluginId} />
      </section>
      {p.transport !== 'http' && (
        <section aria-labelledby="backups-title">
          <h2 id="backups-title">Backups</h2>
          {p.backups.length === 0 ? (
            <p className="muted">No backups yet; an update or uninstall keeps the replaced version here (the newest 3).</p>
          ) : (
            <ul>
              {p.backups.map((b) => (
                <li key={b.name}>
                  Version {b.version}, kept {when(b.createdAt)} <span className="muted">({b.name})</span>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </>
  );
}
