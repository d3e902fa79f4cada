import { PACK_ERRORS, RPC_ERROR_HELP, RpcErrorCode, SDK_SHARED_ERRORS, troubleshootingEntries, type ErrorInfo } from '../src/index';
import { errorGroups } from './doc-tables';

/**
 * The generated part of docs/troubleshooting.md that the protocol owns: every code of the wire catalogue
 * (ERROR_CATALOG by family, then SDK_SHARED_ERRORS and PACK_ERRORS) with what it means and what to do (its
 * message), its likely causes and the longer fix where the catalogue has them, and the JSON-RPC codes. The
 * host's own codes are the block troubleshooting:host-codes, written by `npx nx run host-errors:docs`. The
 * catalogue is the one source: a cause or fix is written in the code's entry (`causes`, `fix` of
 * defineErrors), never only here. `npx nx run protocol:docs` rewrites it and a test fails when the committed
 * page is stale.
 */
export function troubleshootingBlocks(): Record<string, string> {
  const families: [string, Record<string, ErrorInfo>][] = [
    ...errorGroups(),
    ['SDK errors, raised inside a plugin by its SDK (`SDK_*`)', SDK_SHARED_ERRORS],
    ['Packaging errors, reported by every packer (`PACK_*`)', PACK_ERRORS],
  ];
  const rpc = [
    '### JSON-RPC errors (stdio)',
    '',
    'The numeric codes of a JSON-RPC error object between the host and a stdio plugin; the SDKs raise them as host call errors.',
    '',
    '| code | name | meaning and fix |',
    '| --- | --- | --- |',
    ...Object.entries(RpcErrorCode).map(
      ([name, value]) => `| ${value} | \`${name}\` | ${RPC_ERROR_HELP[name as keyof typeof RpcErrorCode]} |`,
    ),
  ].join('\n');
  return { 'troubleshooting:codes': [...troubleshootingEntries(families), rpc].join('\n\n') };
}
