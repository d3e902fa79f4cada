import { ADMIN_ROUTES, type InstallResponse, type PackageSummary, type PendingUpdate } from '@host/admin-api';
import type { TFunction } from 'i18next';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { call } from '../api';
import { Dialog } from './Dialog';
import { ErrorNotice } from './ErrorNotice';
import { PermissionList } from './Facts';

function list(xs: readonly string[], t: TFunction): string {
  return xs.length ? xs.join(', ') : t('update.none');
}

function startLine(s: PackageSummary, t: TFunction): string {
  const line = [s.startCommand.command, ...s.startCommand.args].join(' ');
  return s.startCommand.workingDirectory !== '.' ? t('update.startIn', { line, dir: s.startCommand.workingDirectory }) : line;
}

/**
 * The confirmation of an update: installed and incoming side by side, what
 * changes, what happens to the running plugin and its data. Cancel deletes
 * the pending upload and leaves everything as it was.
 */
export function UpdateDialog({
  pending,
  onDone,
}: {
  pending: PendingUpdate;
  onDone: (result: { confirmed: InstallResponse } | { cancelled: true }) => void;
}) {
  const { t } = useTranslation();
  const [startAfter, setStartAfter] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const { installed: a, incoming: b, changes: c } = pending;

  async function confirm() {
    setBusy(true);
    setError(undefined);
    try {
      const r = await call<InstallResponse>(ADMIN_ROUTES.confirmUpdate, {
        params: { id: pending.id },
        body: { startAfterInstall: startAfter },
      });
      onDone({ confirmed: r });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  async function cancel() {
    setBusy(true);
    try {
      await call(ADMIN_ROUTES.cancelUpdate, { params: { id: pending.id } });
    } catch {
      // Already gone (expired or replaced): nothing was changed either way.
    }
    setBusy(false);
    onDone({ cancelled: true });
  }

  const rows: [string, string, string, boolean][] = [
    [t('update.field.name'), a.name, b.name, a.name !== b.name],
    [t('update.field.version'), a.version, b.version, c.versionChanged],
    [t('update.field.author'), a.author, b.author, a.author !== b.author],
    [t('update.field.sdkVersion'), a.sdkVersion, b.sdkVersion, a.sdkVersion !== b.sdkVersion],
    [t('update.field.startCommand'), startLine(a, t), startLine(b, t), c.startCommandChanged],
    [
      t('update.field.permissions'),
      list(a.permissions, t),
      list(b.permissions, t),
      c.permissionsAdded.length + c.permissionsRemoved.length > 0,
    ],
    [
      t('update.field.commands'),
      list(a.commands, t),
      list(b.commands, t),
      c.commandsAdded.length + c.commandsRemoved.length + c.commandsChanged.length > 0,
    ],
  ];

  return (
    <Dialog open title={t('update.title', { pluginId: pending.pluginId })} onClose={() => void (busy ? undefined : cancel())}>
      <p>
        {c.identicalPackage
          ? t('update.identical')
          : c.versionOrder === 'downgrade'
            ? t('update.downgrade', { from: a.version, to: b.version })
            : c.versionOrder === 'same'
              ? t('update.sameVersion', { version: a.version })
              : t('update.upgrade', { from: a.version, to: b.version })}
      </p>
      <div className="table-scroll">
        <table className="compare">
          <caption className="sr-only">{t('update.caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('update.column.field')}</th>
              <th scope="col">{t('update.column.installed')}</th>
              <th scope="col">{t('update.column.incoming')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([k, x, y, changed]) => (
              <tr key={k} className={changed ? 'changed' : undefined}>
                <th scope="row">
                  {k}
                  {changed && <span className="sr-only"> {t('update.changed')}</span>}
                </th>
                <td>{x}</td>
                <td>{y}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {c.permissionsAdded.length > 0 && (
        <div className="changes-permissions">
          <p>{t('update.permissionsAdded')}</p>
          <PermissionList permissions={c.permissionsAdded} />
        </div>
      )}
      <ul className="changes">
        {c.permissionsRemoved.length > 0 && <li>{t('update.permissionsRemoved', { list: list(c.permissionsRemoved, t) })}</li>}
        {c.commandsAdded.length > 0 && <li>{t('update.commandsAdded', { list: list(c.commandsAdded, t) })}</li>}
        {c.commandsRemoved.length > 0 && <li>{t('update.commandsRemoved', { list: list(c.commandsRemoved, t) })}</li>}
        {c.commandsChanged.length > 0 && <li>{t('update.commandsChanged', { list: list(c.commandsChanged, t) })}</li>}
      </ul>
      <p>{t('update.whatHappens')}</p>
      <label className="check">
        <input type="checkbox" checked={startAfter} onChange={(e) => setStartAfter(e.target.checked)} /> {t('update.startAfter')}
      </label>
      {error !== undefined && <ErrorNotice error={error} title={t('update.failed')} />}
      <div className="buttons">
        <button type="button" className="secondary" disabled={busy} onClick={() => void cancel()}>
          {t('common.cancel')}
        </button>
        <button type="button" disabled={busy} onClick={() => void confirm()}>
          {t('update.confirm', { from: a.version, to: b.version })}
        </button>
      </div>
    </Dialog>
  );
}
