import type { LanguageModelV4 } from '@ai-sdk/provider';
import { wrapLanguageModel } from 'ai';

/**
 * Waits for `hook` before each request `model` sends. Cadre's store uses it as a durability barrier:
 * what a run published so far (a tool result, its journal entry) is secured before the next request, so
 * a model never acts on something a kill could lose. Sits innermost, under the journal, so a step
 * replayed from the journal (no request) does not wait.
 */
export function beforeEachRequest(model: LanguageModelV4, hook: () => void | Promise<void>): LanguageModelV4 {
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: async ({ doGenerate }) => {
        await hook();
        return doGenerate();
      },
      wrapStream: async ({ doStream }) => {
        await hook();
        return doStream();
      },
    },
  }) as LanguageModelV4;
}
