import { HOST_ERROR_CATALOG } from '@host/host-errors';
import { PERMISSIONS } from '@host/protocol';
import { WORDED_CATALOGUE_CODES } from './catalogue-codes';
import en from './en.json';

type Tree = { [key: string]: string | Tree };

/** `{'messages.reply': 'x'}` -> `{messages: {reply: 'x'}}`, as i18next looks dotted keys up. */
function nest(flat: Record<string, string>): Tree {
  const out: Tree = {};
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Tree;
    node[parts[parts.length - 1]!] = value;
  }
  return out;
}

/**
 * The English texts. Those that have their source elsewhere are taken from
 * there, not copied: a permission's meaning from the protocol's catalogue of
 * permissions, and the sentence of each error code the app words itself from
 * the error catalogue (the host answers in those words). The Chinese file
 * translates them.
 */
const ENGLISH: Tree = {
  ...en,
  permission: nest(PERMISSIONS),
  errorCodes: {
    ...Object.fromEntries(WORDED_CATALOGUE_CODES.map((code) => [code, HOST_ERROR_CATALOG[code].message])),
    ...en.errorCodes,
  },
};
export default ENGLISH;
