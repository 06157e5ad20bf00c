import type { Cadre } from '../../app/create-cadre.ts';
import type { CadreEvent } from '../../core/index.ts';
import { UserError } from '../../core/index.ts';
import { answerText } from '../answer-text.ts';
import { approvalMode } from '../approval-prompt.ts';
import { askOnce } from '../ask-once.ts';
import { type CliCommand, type CliContext, openCadre } from '../cli-context.ts';
import { type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT, reportError } from '../errors.ts';
import { DEFAULT_MAX_QUESTION_CHARS, questionFrom } from '../question-input.ts';
import { APPROVAL_FLAGS, NO_WORKER_FLAG, RUN_LIMIT_FLAGS, RUN_SETUP_FLAGS, runLimits } from '../run-flags.ts';
import { reportSetupNotes } from '../setup-notes.ts';
import { sourcesReport } from '../sources-report.ts';
import { workspaceOption } from '../workspace-option.ts';

export const ASK = {
  usage: [
    'cadre ask "QUESTION" [flags]',
    'cat notes.md | cadre ask "summarise"    (what is piped in follows the question)',
    'cadre ask - < question.txt              (the whole question from stdin)',
  ],
  summary:
    'Runs the main agent (or --agent NAME) on one question and prints the answer; on a terminal a live ' +
    'tree of runs goes to stderr. Exit 0 when the run ended ok, 1 otherwise, 2 for a usage or config ' +
    'mistake, 130 when cancelled.',
  flags: {
    agent: { type: 'string', placeholder: 'NAME', description: 'ask this agent instead of main' },
    json: {
      type: 'boolean',
      description: 'print one JSON object: {answer, status, sessionId, run, usage, cost?, sources}',
    },
    events: {
      type: 'boolean',
      description: 'print every event of the run tree as a JSON line on stdout, as it happens',
    },
    session: {
      type: 'string',
      placeholder: 'ID',
      description: 'continue this session (see cadre sessions list)',
    },
    continue: { type: 'boolean', short: 'c', description: 'continue the most recent session' },
    input: {
      type: 'string',
      multiple: true,
      placeholder: 'NAME=VALUE',
      description: "an input of --agent besides the task (e.g. analyze_document's document_id)",
    },
    ...RUN_SETUP_FLAGS,
    ...NO_WORKER_FLAG,
    ...RUN_LIMIT_FLAGS,
    ...APPROVAL_FLAGS,
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre ask`: one question, answered by the main agent or a named one. */
export const askCommand: CliCommand = async (args, context) => {
  const { values, positionals } = parseCommand(ASK, args);
  if (values.json && values.events) throw new UserError('usage', '--json and --events: choose one');
  if (values.session && values.continue) throw new UserError('usage', '--session and --continue: choose one');
  const limits = runLimits(values);
  const cadre = await openCadre(context, {
    ...values,
    ...(values.workspace ? { workspace: workspaceOption(values.workspace, context.cwd) } : {}),
  });
  try {
    const question = await questionFrom(
      positionals,
      context.stdin,
      cadre.config.limits?.maxQuestionChars ?? DEFAULT_MAX_QUESTION_CHARS,
    );
    if (!question) throw new UserError('usage', 'usage: cadre ask "QUESTION" [flags]  (cadre ask --help)');
    reportSetupNotes(cadre, context.stderr);
    const sessionId = values.continue
      ? (await cadre.sessions.list(context.userId, { limit: 1 }))[0]?.id
      : values.session;
    return await answer(cadre, question, { ...values, sessionId }, limits, context);
  } finally {
    await cadre.close();
  }
};

/**
 * Asks through askOnce and prints the answer as `cadre ask` does (also `cadre runs say` following up a
 * finished run: `continues`); the exit status says how the run ended.
 */
export async function answer(
  cadre: Cadre,
  question: string,
  values: Pick<
    ReturnType<typeof parseCommand<typeof ASK.flags>>['values'],
    'agent' | 'json' | 'events' | 'input' | 'approve-all' | 'deny-all'
  > & { sessionId: string | undefined; continues?: string },
  limits: ReturnType<typeof runLimits>,
  context: CliContext,
): Promise<number> {
  const controller = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts++;
    if (interrupts > 1) process.exit(EXIT.interrupted);
    context.stderr.write('\ncadre: cancelling… (Ctrl-C again to quit at once)\n');
    controller.abort(new Error('cancelled by the person (Ctrl-C)'));
  };
  // A closed terminal (SIGHUP) or `kill` (SIGTERM) stops the tree like Ctrl-C, so it is recorded cancelled.
  for (const signal of STOP_SIGNALS) process.on(signal, onInterrupt);
  try {
    const result = await askOnce(cadre, {
      question,
      ...(values.agent ? { agent: values.agent } : {}),
      ...(values.continues ? { continues: values.continues } : {}),
      ...(values.sessionId ? { sessionId: values.sessionId } : {}),
      rootLimits: limits.rootLimits,
      ...(limits.treeBudget ? { limits: { treeBudget: limits.treeBudget } } : {}),
      ...(values.events
        ? { onEvent: (event: CadreEvent) => context.stdout.write(`${JSON.stringify(event)}\n`) }
        : {}),
      userId: context.userId,
      inputs: parseInputs(values.input ?? []),
      signal: controller.signal,
      stderr: context.stderr,
      approval: {
        mode: approvalMode(values['approve-all'], values['deny-all']),
        stdin: context.stdin ?? process.stdin,
      },
    });
    const { envelope } = result;
    // The answer's own cited links, each checked against what the tree's tools returned.
    const sources = envelope.sources ?? [];
    if (values.json) {
      const { answer, status, sessionId, run, usage, cost } = result;
      const output = { answer, status, sessionId, run, usage, ...(cost ? { cost } : {}), sources };
      context.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    } else if (!values.events && envelope.status !== 'error') {
      // An error's summary is the reason, which goes to stderr below; anything else is (partial) answer.
      context.stdout.write(await answerText(envelope.summary, context.stdout));
      // The list goes to stderr, beside the live tree: stdout stays the answer alone for pipes.
      const listed = sourcesReport(sources);
      if (listed.length) context.stderr.write(`\n${listed.join('\n')}\n`);
    }
    if (envelope.status === 'cancelled') return EXIT.interrupted;
    if (envelope.status !== 'ok') {
      context.stderr.write(
        `cadre: run ${envelope.runId} ended with status ${envelope.status}: ${stopReason(envelope.summary)}\n`,
      );
      return EXIT.notOk;
    }
    return EXIT.ok;
  } catch (error) {
    return reportError(error, context.stderr);
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onInterrupt);
  }
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The reason a run stopped: the error noted after a partial answer, else the summary's first line. */
function stopReason(summary: string): string {
  return /\[stopped by an error: ([^\n]*)\]$/.exec(summary)?.[1] ?? firstLine(summary);
}

function parseInputs(pairs: string[]): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals < 1) throw new UserError('usage', `--input ${pair}: write --input name=value`);
    inputs[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return inputs;
}

function firstLine(text: string): string {
  return (text.split('\n').find((line) => line.trim()) ?? '').slice(0, 200);
}
