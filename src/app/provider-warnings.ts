import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

/** AI SDK's hook for provider warnings (`globalThis.AI_SDK_LOG_WARNINGS`), as far as Cadre sets it. */
type WarningLogger = ((options: {
  warnings: Array<{ type: string; feature?: string; details?: string; message?: string }>;
  provider?: string;
  model?: string;
}) => void) & { cadre?: true };

/**
 * Sends AI SDK's provider warnings ("temperature is not supported for reasoning models"…) to
 * `$CADRE_HOME/cadre.log`, each once per process, instead of the person's terminal, where the SDK prints
 * them by default between the lines of an answer. A program that set its own logger keeps it.
 */
export function logProviderWarnings(home: string): void {
  const global = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
  const current = global.AI_SDK_LOG_WARNINGS as WarningLogger | undefined;
  if (current !== undefined && !current.cadre) return;
  const seen = new Set<string>();
  const logger: WarningLogger = ({ warnings, provider, model }) => {
    for (const warning of warnings) {
      const what = warning.message ?? [warning.feature, warning.details].filter(Boolean).join(': ');
      const line = `AI SDK warning (${provider ?? '?'} ${model ?? '?'}): ${warning.type} ${what}`;
      if (seen.has(line)) continue;
      seen.add(line);
      try {
        appendFileSync(join(home, 'cadre.log'), `${new Date().toISOString()} ${line}\n`);
      } catch {
        // A log that cannot be written (a read-only home) must not fail the answer it was about.
      }
    }
  };
  logger.cadre = true;
  global.AI_SDK_LOG_WARNINGS = logger;
}
