import type { ProtocolModel } from '../model';

/** A file an emitter produces, with its path relative to the repository root. */
export interface GeneratedFile {
  readonly path: string;
  readonly content: string;
}

/**
 * One target language. An emitter is a pure function of the model: the same
 * model gives the same files, byte for byte, so committed output can be
 * checked by regenerating it in memory (generate.spec.ts).
 */
export interface Emitter {
  /** Short name used on the command line (`--lang python`). */
  readonly language: string;
  /** Folder (relative to the repository root) that holds this emitter's files and nothing else generated. */
  readonly outDir: string;
  emit(model: ProtocolModel): GeneratedFile[];
}
