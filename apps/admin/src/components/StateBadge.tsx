import type { PluginSummary } from '@host/admin-api';
import type { TFunction } from 'i18next';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';

function secondsUntil(at: string | undefined, now: number): number | undefined {
  if (!at) return undefined;
  return Math.max(0, Math.ceil((Date.parse(at) - now) / 1000));
}

/** The badge text and the sentence that explains it, in the app's language (`t`). */
export function describeState(
  p: Pick<PluginSummary, 'state' | 'transport' | 'runtime' | 'issues' | 'enabled'>,
  t: TFunction,
  now = Date.now(),
) {
  const r = p.runtime;
  if (p.transport === 'http' && p.state === 'running') {
    const health = r?.health ?? 'healthy';
    const error = r?.lastError ? t('state.lastError', { error: r.lastError }) : '';
    return {
      label: t(`state.http.${health}.label`),
      tone: health === 'healthy' ? 'ok' : health === 'degraded' ? 'warn' : 'bad',
      text: t(`state.http.${health}.text`, { error }),
    };
  }
  switch (p.state) {
    case 'running':
      return {
        label: t('state.running.label'),
        tone: 'ok',
        text: t(r?.pid ? 'state.running.textPid' : 'state.running.text', { pid: r?.pid }),
      };
    case 'starting':
      return { label: t('state.starting.label'), tone: 'warn', text: t('state.starting.text') };
    case 'stopping':
      return { label: t('state.stopping.label'), tone: 'warn', text: t('state.stopping.text') };
    case 'stopped':
      return {
        label: t('state.stopped.label'),
        tone: 'idle',
        text: t(p.transport === 'http' ? 'state.stopped.textHttp' : 'state.stopped.text'),
      };
    case 'installed':
      return { label: t('state.installed.label'), tone: 'idle', text: t('state.installed.text') };
    case 'restartPending': {
      const s = secondsUntil(r?.nextRestartAt, now);
      const reason = r?.stateReason ? t('state.restartPending.reason', { reason: r.stateReason }) : '';
      return {
        label: s !== undefined ? t('state.restartPending.labelIn', { seconds: s }) : t('state.restartPending.label'),
        tone: 'warn',
        text:
          s !== undefined
            ? t('state.restartPending.textIn', { reason, crashes: r?.crashCount ?? 0, seconds: s })
            : t('state.restartPending.text', { reason, crashes: r?.crashCount ?? 0 }),
      };
    }
    case 'failed':
      return {
        label: t('state.failed.label'),
        tone: 'bad',
        text: t('state.failed.text', { reason: r?.stateReason ?? r?.lastError ?? t('state.failed.unknownReason') }),
      };
    case 'invalidManifest':
      return {
        label: t('state.invalidManifest.label'),
        tone: 'bad',
        text: t('state.invalidManifest.text', {
          issues:
            (p.issues ?? []).map((i) => `${i.path ? `${i.path}: ` : ''}${i.message}`).join('; ') || t('state.invalidManifest.seeIssues'),
        }),
      };
  }
}

/** A state badge with its explanation beside it; restart countdowns tick. */
export function StateBadge({ plugin }: { plugin: Pick<PluginSummary, 'state' | 'transport' | 'runtime' | 'issues' | 'enabled'> }) {
  const { t } = useTranslation();
  const [now, setNow] = useState(() => Date.now());
  const ticking = plugin.state === 'restartPending';
  useEffect(() => {
    if (!ticking) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [ticking]);
  const d = describeState(plugin, t, now);
  return (
    <span className="state">
      <span className={`badge badge-${d.tone}`}>{d.label}</span> <span className="state-text">{d.text}</span>
    </span>
  );
}
