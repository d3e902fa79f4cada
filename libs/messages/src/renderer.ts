import type { Target } from '@host/protocol';
import type { NormalizedMessage } from './normalize';
import type { MessageResult } from './result';

/** What a renderer produces: the JSON body the provider's send API takes. */
export type ProviderBody = Readonly<Record<string, unknown>>;

/**
 * Turns a normalised message into one provider's body. It receives only the
 * output of normalisation (composites flattened, ids valid, parts counted)
 * and a target that passed TargetSchema, so it checks just its provider's
 * own rules: which formats and mentions each target type takes, its target
 * id form, escaping and the length limit.
 */
export interface ProviderRenderer<B extends ProviderBody = ProviderBody> {
  /** The provider name events carry in `source`, e.g. "qqbot". */
  readonly provider: string;
  render(message: NormalizedMessage, target: Target): MessageResult<B>;
}
