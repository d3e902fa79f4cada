// Imported first by the package entry for its side effect: when the process
// was started with --host-stdio, stdout is reserved for frames before any
// plugin code can print (see enterProtocolMode).
import { enterProtocolMode, isProtocolMode } from './stdio/protocol-mode';

if (typeof process !== 'undefined' && isProtocolMode()) enterProtocolMode();
