import { errorTables, troubleshootingEntries, type ErrorInfo } from '@host/protocol';
import { API_ERRORS } from './admin-api';
import { INSTALL_ERRORS } from './install';
import { QQBOT_ERRORS } from './qqbot';
import { REGISTRATION_ERRORS } from './registration';
import { REQUEST_FIELD_ERRORS } from './requests';
import { RUNTIME_ERRORS } from './runtime';

/** The host's families with their titles, in the order docs/protocol/v2.md lists them after the wire families. */
export function hostErrorGroups(): [string, Record<string, ErrorInfo>][] {
  return [
    ['Starting a stdio plugin', RUNTIME_ERRORS],
    ['Installing and updating packages', INSTALL_ERRORS],
    ['Registering HTTP plugins', REGISTRATION_ERRORS],
    ['Admin API', API_ERRORS],
    ['Field issues of admin and console API requests (`request.field.*`, `console.field.*`)', REQUEST_FIELD_ERRORS],
    ['QQ Bot webhook and accounts (`QQBOT_*`)', QQBOT_ERRORS],
  ];
}

/** The generated blocks the host's catalogue owns: its tables in docs/protocol/v2.md and its entries in docs/troubleshooting.md. */
export const HOST_BLOCKS = { spec: 'host-error-catalog', troubleshooting: 'troubleshooting:host-codes' } as const;

/**
 * The text of the host's generated blocks, by document: `npx nx run host-errors:docs` writes them, and a
 * test fails when the committed pages differ. The protocol's generator (`protocol:docs`) leaves them alone.
 */
export function hostDocBlocks(): { spec: Record<string, string>; troubleshooting: Record<string, string> } {
  const groups = hostErrorGroups();
  return {
    spec: { [HOST_BLOCKS.spec]: errorTables(groups) },
    troubleshooting: { [HOST_BLOCKS.troubleshooting]: troubleshootingEntries(groups).join('\n\n') },
  };
}
