import type { Emitter } from './emitter';
import { csharpEmitter } from './csharp';
import { goEmitter } from './go';
import { pythonEmitter } from './python';

export type { Emitter, GeneratedFile } from './emitter';

/**
 * Every language the generator writes. A new language (Go, C#) adds its
 * emitter here; nothing else changes.
 */
export const EMITTERS: readonly Emitter[] = [pythonEmitter, goEmitter, csharpEmitter];
