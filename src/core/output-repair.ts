import { isStepCount, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';
import type { CallSettings } from './model-options.ts';
import type { RunFrame } from './run-frame.ts';
import { streamTurns, type TurnResult } from './stream-turns.ts';

/** What the repair call shares with the run's own calls. */
export interface RepairCall {
  model: LanguageModel;
  instructions: string;
  /** The run's tools, declared but not callable (see declaredOnly): the history holds calls to them. */
  tools: ToolSet;
  temperature: number | undefined;
  maxOutputTokens: number;
  metered: boolean;
  call?: CallSettings | undefined;
}

/** Asked of a model whose final answer did not match its agent's output schema. */
export function repairPrompt(error: string): string {
  return (
    `Your final answer does not match the required output schema: ${error}. ` +
    'Do not call any tool. Reply with only the corrected JSON object, keeping what you found.'
  );
}

/**
 * One more model call, its tools declared with `toolChoice: 'none'`, telling the model what was wrong with its structured answer. Models
 * usually fix a missing field or a wrong type when told which; one attempt bounds the cost.
 */
export function repairStructuredOutput(
  frame: RunFrame,
  call: RepairCall,
  transcript: ModelMessage[],
  error: string,
  stepOffset: number,
): Promise<TurnResult> {
  return streamTurns(frame, {
    ...call,
    messages: [...transcript, { role: 'user', content: repairPrompt(error) }],
    toolChoice: 'none',
    stopWhen: [isStepCount(1)],
    stepOffset,
  });
}
