import type { StopCondition, ToolSet } from 'ai';
import { budgetSpent, type RunFrame } from './run-frame.ts';

/** Why the tool loop stopped before the model gave its answer. */
export type StopReason = 'max_turns' | 'budget';

/**
 * One reason to stop the tool loop, as a value (AI SDK `stopWhen` style): a name and a predicate over
 * what the loop has done so far. The predicate only reads, so the same value both stops the loop and,
 * asked again afterwards, says why it stopped.
 */
export interface NamedStop {
  reason: StopReason;
  isMet: (progress: { steps: number }) => boolean;
}

/** Stop once the loop has taken `maxTurns` steps (the SDK's `isStepCount`). */
export function turnLimitReached(maxTurns: number): NamedStop {
  return { reason: 'max_turns', isMet: ({ steps }) => steps >= maxTurns };
}

/** Stop once the run's or the tree's token budget is spent (usage only grows, so this stays true). */
export function budgetExhausted(frame: RunFrame): NamedStop {
  return { reason: 'budget', isMet: () => budgetSpent(frame) };
}

/** The stops as the SDK's `stopWhen` list. */
export function stopWhenOf(stops: readonly NamedStop[]): StopCondition<ToolSet>[] {
  return stops.map(
    (stop) =>
      ({ steps }) =>
        stop.isMet({ steps: steps.length }),
  );
}

/**
 * Which stop ended a loop that took `steps` steps, or undefined when none is met. When several are, the
 * last in the list wins (a spent budget says more than a turn count).
 */
export function stopReasonAfter(stops: readonly NamedStop[], steps: number): StopReason | undefined {
  return stops.findLast((stop) => stop.isMet({ steps }))?.reason;
}
