import { ADMIN_ROUTES, type InstallResponse, type PackageSummary, type PendingUpdate } from '@host/admin-api';
import { useState } from 'react';
import { call } from '../api';
import { Dialog } from './Dialog';
import { ErrorNotice } from './ErrorNotice';

function list(xs: readonly string[]): string {
  return xs.length ? xs.join(', ') : 'none';
}

function startLine(s: PackageSummary): string {
  return (
    [s.startCommand.command, ...s.startCommand.args].join(' ') +
    (s.startCommand.workingDirectory !== '.' ? ` (in ${s.startCommand.workingDirectory})` : '')
  );
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
    ['Name', a.name, b.name, a.name !== b.name],
    ['Version', a.version, b.version, c.versionChanged],
    ['Author', a.author, b.author, a.author !== b.author],
    ['SDK version', a.sdkVersion, b.sdkVersion, a.sdkVersion !== b.sdkVersion],
    ['Start command', startLine(a), startLine(b), c.startCommandChanged],
    ['Permissions', list(a.permissions), list(b.permissions), c.permissionsAdded.length + c.permissionsRemoved.length > 0],
    ['Commands', list(a.commands), list(b.commands), c.commandsAdded.length + c.commandsRemoved.length + c.commandsChanged.length > 0],
  ];

  return (
    <Dialog open title={`Update ${pending.pluginId}?`} onClose={() => void (busy ? undefined : cancel())}>
      <p>
        {c.identicalPackage
          ? 'The upload is byte for byte the installed package: confirming reinstalls the same version.'
          : c.versionOrder === 'downgrade'
            ? `This is a downgrade from ${a.version} to ${b.version}.`
            : c.versionOrder === 'same'
              ? `Same version ${a.version}, different package.`
              : `Upgrade from ${a.version} to ${b.version}.`}
      </p>
      <div className="table-scroll">
        <table className="compare">
          <caption className="sr-only">Installed and incoming versions</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Installed</th>
              <th scope="col">Incoming</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([k, x, y, changed]) => (
              <tr key={k} className={changed ? 'changed' : undefined}>
                <th scope="row">
                  {k}
                  {changed && <span className="sr-only"> (changed)</span>}
                </th>
                <td>{x}</td>
                <td>{y}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ul className="changes">
        {c.permissionsAdded.length > 0 && <li>Permissions added: {list(c.permissionsAdded)}</li>}
        {c.permissionsRemoved.length > 0 && <li>Permissions removed: {list(c.permissionsRemoved)}</li>}
        {c.commandsAdded.length > 0 && <li>Commands added: {list(c.commandsAdded)}</li>}
        {c.commandsRemoved.length > 0 && <li>Commands removed: {list(c.commandsRemoved)}</li>}
        {c.commandsChanged.length > 0 && <li>Commands changed: {list(c.commandsChanged)}</li>}
      </ul>
      <p>
        If the plugin is running, it is stopped, replaced and started again. Its data and settings are kept, and the installed version is
        kept as a backup. Cancel leaves everything as it is.
      </p>
      <label className="check">
        <input type="checkbox" checked={startAfter} onChange={(e) => setStartAfter(e.target.checked)} /> Start it after the update even if
        it is not running now
      </label>
      {error !== undefined && <ErrorNotice error={error} title="The update failed" />}
      <div className="buttons">
        <button type="button" className="secondary" disabled={busy} onClick={() => void cancel()}>
          Cancel
        </button>
        <button type="button" disabled={busy} onClick={() => void confirm()}>
          Replace {a.version} with {b.version}
        </button>
      </div>
    </Dialog>
  );
}
