import type { PluginSummary } from '@host/admin-api';
import { useEffect, useState } from 'react';

function secondsUntil(at: string | undefined, now: number): number | undefined {
  if (!at) return undefined;
  return Math.max(0, Math.ceil((Date.parse(at) - now) / 1000));
}

/** The badge text and the sentence that explains it. */
export function describeState(p: Pick<PluginSummary, 'state' | 'transport' | 'runtime' | 'issues' | 'enabled'>, now = Date.now()) {
  const r = p.runtime;
  if (p.transport === 'http' && p.state === 'running') {
    const health = r?.health ?? 'healthy';
    const text = {
      healthy: 'The host delivers events to it and its last answers were fine.',
      degraded: `Delivery works, but recent answers failed or were refused${r?.lastError ? `: ${r.lastError}` : ''}.`,
      unreachable: `The host cannot reach it and stopped calling it for now${r?.lastError ? `: ${r.lastError}` : ''}. Check that the service runs.`,
    }[health];
    return { label: `HTTP ${health}`, tone: health === 'healthy' ? 'ok' : health === 'degraded' ? 'warn' : 'bad', text };
  }
  switch (p.state) {
    case 'running':
      return { label: 'Running', tone: 'ok', text: `The process runs${r?.pid ? ` (pid ${r.pid})` : ''} and receives events.` };
    case 'starting':
      return { label: 'Starting', tone: 'warn', text: 'The process was launched; the host waits for its handshake.' };
    case 'stopping':
      return { label: 'Stopping', tone: 'warn', text: 'The host asked the process to stop and waits for it to exit.' };
    case 'stopped':
      return {
        label: 'Stopped',
        tone: 'idle',
        text:
          p.transport === 'http'
            ? 'Disabled: the host sends it no events. Start it to enable delivery.'
            : 'Stopped by the operator; it is not started with the host. Start it to run it.',
      };
    case 'installed':
      return { label: 'Installed', tone: 'idle', text: 'Installed and never started. Start it to run it.' };
    case 'restartPending': {
      const s = secondsUntil(r?.nextRestartAt, now);
      return {
        label: s !== undefined ? `Restart in ${s} s` : 'Restart pending',
        tone: 'warn',
        text: `It exited unexpectedly${r?.stateReason ? ` (${r.stateReason})` : ''}; crash ${r?.crashCount ?? 0}. The host restarts it${s !== undefined ? ` in ${s} s` : ' soon'}.`,
      };
    }
    case 'failed':
      return {
        label: 'Failed',
        tone: 'bad',
        text: `${r?.stateReason ?? r?.lastError ?? 'It failed to start or crashed too often.'} The host waits for you: fix the cause (see its log), then start it.`,
      };
    case 'invalidManifest':
      return {
        label: 'Invalid manifest',
        tone: 'bad',
        text: `Its package on disk does not validate: ${(p.issues ?? []).map((i) => `${i.path ? `${i.path}: ` : ''}${i.message}`).join('; ') || 'see its issues'}. Install a fixed package.`,
      };
  }
}

/** A state badge with its explanation beside it; restart countdowns tick. */
export function StateBadge({ plugin }: { plugin: Pick<PluginSummary, 'state' | 'transport' | 'runtime' | 'issues' | 'enabled'> }) {
  const [now, setNow] = useState(() => Date.now());
  const ticking = plugin.state === 'restartPending';
  useEffect(() => {
    if (!ticking) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [ticking]);
  const d = describeState(plugin, now);
  return (
    <span className="state">
      <span className={`badge badge-${d.tone}`}>{d.label}</span> <span className="state-text">{d.text}</span>
    </span>
  );
}
