import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Middleware,
} from '@ai-sdk/provider';
import { APICallError, wrapLanguageModel } from 'ai';

/**
 * An OpenAI model that finds out for itself that its organisation keeps no data (Zero Data Retention).
 * Such an organisation refuses the item references AI SDK sends for earlier output ("Items are not
 * persisted for Zero Data Retention organizations"), so every multi-step run would fail at its second step.
 * On that refusal the call is made again with `store: false` and the encrypted reasoning asked for, and the
 * reasoning the history holds only by reference is left out (it cannot be sent without its encrypted
 * content); every later call of this model goes so from the start. The `zeroDataRetention` setting does the
 * same without the first refusal.
 */
export function detectingZeroDataRetention(model: LanguageModelV4): LanguageModelV4 {
  let detected = false;
  const middleware: LanguageModelV4Middleware = {
    specificationVersion: 'v4',
    transformParams: async ({ params }) => (detected ? withoutStoredItems(params) : params),
    wrapGenerate: async ({ doGenerate, params }) => {
      try {
        return await doGenerate();
      } catch (error) {
        if (detected || !isZeroDataRetentionRefusal(error)) throw error;
        detected = true;
        return model.doGenerate(withoutStoredItems(params));
      }
    },
    wrapStream: async ({ doStream, params }) => {
      try {
        return await doStream();
      } catch (error) {
        if (detected || !isZeroDataRetentionRefusal(error)) throw error;
        detected = true;
        return model.doStream(withoutStoredItems(params));
      }
    },
  };
  return wrapLanguageModel({ model, middleware }) as LanguageModelV4;
}

/** The refusal a Zero Data Retention organisation gives a reference to an earlier item. */
export function isZeroDataRetentionRefusal(error: unknown): boolean {
  if (!APICallError.isInstance(error)) return false;
  return /not persisted for Zero Data Retention/i.test(`${error.message} ${error.responseBody ?? ''}`);
}

type OpenAIOptions = { store?: unknown; include?: unknown; reasoningEncryptedContent?: unknown };

/** `store: false` with encrypted reasoning included, and reasoning without its encrypted content left out. */
function withoutStoredItems(params: LanguageModelV4CallOptions): LanguageModelV4CallOptions {
  const openai = (params.providerOptions?.openai ?? {}) as OpenAIOptions;
  const include = Array.isArray(openai.include) ? (openai.include as string[]) : [];
  const prompt = params.prompt.map((message) =>
    message.role !== 'assistant'
      ? message
      : {
          ...message,
          content: message.content.filter(
            (part) =>
              part.type !== 'reasoning' ||
              (part.providerOptions?.openai as OpenAIOptions | undefined)?.reasoningEncryptedContent != null,
          ),
        },
  );
  return {
    ...params,
    prompt,
    providerOptions: {
      ...params.providerOptions,
      openai: {
        ...(params.providerOptions?.openai ?? {}),
        store: false,
        include: [...new Set([...include, 'reasoning.encrypted_content'])],
      },
    },
  };
}
