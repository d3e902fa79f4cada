/**
 * Node-only helpers of the protocol (`@host/protocol/node`): what the host,
 * the Node SDK and the packer must compute the same way but cannot do in a
 * browser. The rest of the protocol stays browser-safe.
 */
export { isInsideDirectory, packagePath } from './package-path';
export {
  computeSignature,
  signatureHeaders,
  verifySignature,
  type SignatureCheck,
  type SignatureOptions,
  type SignatureRejection,
} from './signing';
