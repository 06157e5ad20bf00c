/**
 * What every model call of a run carries for Cadre's own layers under `providerOptions.cadre` (providers
 * read only their own key): the run's deadline, up to which the retry policy honours a provider's wait,
 * and where a retry is told, so the run's watchers see "the provider is busy, retrying 2/4" while it waits.
 * It travels with the call because the retry policy wraps the model once, for every run that uses it.
 */
export interface CadreCallOptions {
  /** When the run must end (ms since the epoch). */
  deadline: number;
  onRetry?: (notice: ModelRetryNotice) => void;
}

/** A model call about to be tried again. */
export interface ModelRetryNotice {
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  reason: string;
}

/** Cadre's own options of a model call, from its provider options (undefined fields where absent). */
export function cadreCallOptionsOf(
  providerOptions: Record<string, unknown> | undefined,
): Partial<CadreCallOptions> {
  const own = providerOptions?.cadre as { deadline?: unknown; onRetry?: unknown } | undefined;
  return {
    ...(typeof own?.deadline === 'number' && Number.isFinite(own.deadline) ? { deadline: own.deadline } : {}),
    ...(typeof own?.onRetry === 'function' ? { onRetry: own.onRetry as CadreCallOptions['onRetry'] } : {}),
  };
}
