import { PERMISSIONS } from '@host/protocol';
import type { ReactNode } from 'react';

/** Permissions with the reason each one is asked for. */
export function PermissionList({ permissions }: { permissions: readonly string[] }) {
  if (permissions.length === 0) return <p className="muted">No permissions.</p>;
  return (
    <ul className="permissions">
      {permissions.map((p) => (
        <li key={p}>
          <code>{p}</code>: {(PERMISSIONS as Record<string, string>)[p] ?? 'A permission this host does not describe.'}
        </li>
      ))}
    </ul>
  );
}

export function CommandList({
  commands,
}: {
  commands: readonly { name: string; prefixes: readonly string[]; aliases?: readonly string[]; description?: string }[];
}) {
  if (commands.length === 0) return <p className="muted">No commands (it may still observe messages).</p>;
  return (
    <ul className="commands">
      {commands.map((c) => (
        <li key={c.name}>
          <code>
            {c.prefixes[0] ?? ''}
            {c.name}
          </code>
          {c.aliases?.length ? <span className="muted"> (also {c.aliases.join(', ')})</span> : null}
          {c.description ? <span>: {c.description}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** A definition list of label/value rows. */
export function Facts({ rows }: { rows: [string, ReactNode][] }) {
  return (
    <dl className="facts">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
