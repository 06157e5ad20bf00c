/** The runtime's limits; an agent definition may tighten or loosen its own. All are explicit numbers. */
export interface RuntimeLimits {
  /** Model calls with tools per run before the forced final answer. */
  maxTurns: number;
  /** How deep delegation may nest; 1 means sub-agents get no agent tools. */
  maxDepth: number;
  /** Wall-clock limit per run, in milliseconds. */
  timeoutMs: number;
  /** Tokens one run may spend; undefined means no per-run limit. */
  runBudget: number | undefined;
  /** Tokens a whole tree may spend; undefined means no tree limit. */
  treeBudget: number | undefined;
  /** Sibling sub-agent runs going at once under one parent. */
  maxConcurrency: number;
  /** Delegations one model step may ask for; the rest are refused. */
  maxFanOut: number;
  /** Characters of a tool output handed to the model; the rest is cut with a notice. */
  maxToolOutputChars: number;
  /** Tokens one model call may write (the provider's max output tokens). */
  maxOutputTokens: number;
  /** Wall-clock limit for one model call (its retries included), in milliseconds. */
  modelCallTimeoutMs: number;
  /** Characters of a sub-agent's result its parent model sees; the rest is cut with a notice. */
  maxResultChars: number;
  /** Tool calls one model response may make; the rest are refused with a notice (see tool-call-bounds.ts). */
  maxToolCallsPerStep: number;
  /** Characters of JSON arguments one tool call may have; a larger call is refused, not echoed back. */
  maxToolInputChars: number;
  /** Deepest nesting of arrays and objects in one tool call's arguments. */
  maxToolInputDepth: number;
  /** Characters of JSON of one tool output that are recorded (events, journal, store); past it, its head. */
  maxStoredOutputChars: number;
  /**
   * Sub-agent runs one answer (so one session, which has one answer going at a time) may have running in
   * the background at once; a background delegation past it runs in the foreground instead.
   */
  maxBackground: number;
}

export const DEFAULT_LIMITS: RuntimeLimits = {
  maxTurns: 8,
  maxDepth: 1,
  timeoutMs: 300_000,
  runBudget: undefined,
  treeBudget: undefined,
  maxConcurrency: 4,
  maxFanOut: 8,
  maxToolOutputChars: 40_000,
  maxOutputTokens: 4_096,
  modelCallTimeoutMs: 180_000,
  maxResultChars: 12_000,
  maxToolCallsPerStep: 32,
  maxToolInputChars: 300_000,
  maxToolInputDepth: 64,
  maxStoredOutputChars: 1_000_000,
  maxBackground: 4,
};

/** Asked of the model, without tools, when a run used all its turns. */
export const FINAL_ANSWER_PROMPT =
  'You have used all the turns you were given. Do not call any tool. Using only what you found so far, ' +
  'give your final answer now, and say plainly what you could not finish.';
