import { PACK_ERRORS, RPC_ERROR_HELP, RpcErrorCode, SDK_SHARED_ERRORS, type ErrorInfo } from '../src/index';
import { errorGroups } from './doc-tables';

/**
 * The generated part of docs/troubleshooting.md: every code of the error catalogue (ERROR_CATALOG by
 * family, then SDK_SHARED_ERRORS and PACK_ERRORS) with what it means and what to do (its message), its likely causes and
 * the longer fix where the catalogue has them, and the JSON-RPC codes. The catalogue is the one source:
 * a cause or fix is written in the code's entry (`causes`, `fix` of defineErrors), never only here.
 * `npx nx run protocol:docs` rewrites it and a test fails when the committed page is stale.
 */
export function troubleshootingBlocks(): Record<string, string> {
  const families: [string, Record<string, ErrorInfo>][] = [
    ...errorGroups(),
    ['SDK errors, raised inside a plugin by its SDK (`SDK_*`)', SDK_SHARED_ERRORS],
    ['Packaging errors, reported by every packer (`PACK_*`)', PACK_ERRORS],
  ];
  const entry = (code: string, info: ErrorInfo): string => {
    const out = [`#### \`${code}\``, '', `${info.status !== undefined ? `HTTP ${info.status}. ` : ''}${info.message}`];
    if (info.causes) out.push('', `**Likely causes.** ${info.causes}`);
    if (info.fix) out.push('', `**Fix.** ${info.fix}`);
    return out.join('\n');
  };
  const index = families
    .map(([title, group]) => `- ${title}: ${Object.keys(group).length} code${Object.keys(group).length === 1 ? '' : 's'}`)
    .join('\n');
  const body = families.map(([title, group]) => [`### ${title}`, ...Object.entries(group).map(([c, i]) => entry(c, i))].join('\n\n'));
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
  return { 'troubleshooting:codes': [index, ...body, rpc].join('\n\n') };
}
