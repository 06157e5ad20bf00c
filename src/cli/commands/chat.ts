import { createInterface } from 'node:readline/promises';
import { UserError } from '../../core/index.ts';
import { answerText } from '../answer-text.ts';
import { approvalMode } from '../approval-prompt.ts';
import { askOnce } from '../ask-once.ts';
import { type CliCommand, openCadre } from '../cli-context.ts';
import { type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT, reportError } from '../errors.ts';
import { checkQuestionLength } from '../question-input.ts';
import { APPROVAL_FLAGS, NO_WORKER_FLAG, RUN_LIMIT_FLAGS, RUN_SETUP_FLAGS, runLimits } from '../run-flags.ts';
import { sessionReplay } from '../session-replay.ts';
import { reportSetupNotes } from '../setup-notes.ts';
import { sourcesReport } from '../sources-report.ts';
import { workspaceOption } from '../workspace-option.ts';

export const CHAT = {
  usage: ['cadre chat [flags]'],
  summary:
    'A conversation with the main agent in the terminal, kept as a session, with the same live tree as ' +
    'cadre ask. Ctrl-C during an answer cancels that answer (recorded as cancelled); Ctrl-C or Ctrl-D ' +
    'at the prompt, or /exit, leaves. Lines piped in are asked one by one.',
  flags: {
    session: {
      type: 'string',
      placeholder: 'ID',
      description: 'continue this session, showing its earlier turns (see cadre sessions list)',
    },
    continue: { type: 'boolean', short: 'c', description: 'continue the most recent session' },
    agent: { type: 'string', placeholder: 'NAME', description: 'talk to this agent instead of main' },
    ...RUN_SETUP_FLAGS,
    ...NO_WORKER_FLAG,
    ...RUN_LIMIT_FLAGS,
    ...APPROVAL_FLAGS,
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre chat`: a conversation kept as a session. */
export const chatCommand: CliCommand = async (args, context) => {
  const { values, positionals } = parseCommand(CHAT, args);
  if (positionals.length)
    throw new UserError('usage', `cadre chat takes no words ("${positionals[0]}"); type them at the prompt`);
  if (values.session && values.continue) throw new UserError('usage', '--session and --continue: choose one');
  const limits = runLimits(values);
  const approval = approvalMode(values['approve-all'], values['deny-all']);
  const cadre = await openCadre(context, {
    ...values,
    ...(values.workspace ? { workspace: workspaceOption(values.workspace, context.cwd) } : {}),
  });
  reportSetupNotes(cadre, context.stderr);
  let sessionId: string;
  // A chat left before anything was asked keeps no session: an empty "(untitled)" one in sessions list
  // would only be clutter, and the line offering to continue it would point at nothing.
  let createdHere = false;
  let asked = false;
  try {
    const continued = values.continue
      ? (await cadre.sessions.list(context.userId, { limit: 1 }))[0]?.id
      : values.session;
    const earlier = continued ? await cadre.sessions.get(context.userId, continued) : undefined;
    sessionId = earlier?.id ?? (await cadre.sessions.create(context.userId)).id;
    createdHere = !earlier;
    if (earlier) {
      const width = ((context.stderr as { columns?: number }).columns ?? 120) - 1;
      context.stderr.write(
        await sessionReplay(
          earlier,
          (runId) => cadre.runs.get(context.userId, runId).catch(() => undefined),
          {
            width,
          },
        ),
      );
    }
  } catch (error) {
    await cadre.close();
    throw error;
  }
  const stdin: NodeJS.ReadableStream & { isTTY?: boolean } = context.stdin ?? process.stdin;
  const input = createInterface({ input: stdin, output: context.stderr, terminal: Boolean(stdin.isTTY) });
  context.stderr.write(`Cadre chat, session ${sessionId}. Ctrl-D to leave.\n`);
  let current: AbortController | undefined;
  const onInterrupt = () => {
    if (current) current.abort(new Error('cancelled by the person (Ctrl-C)'));
    else input.close();
  };
  // `kill` (SIGTERM) or a closed terminal (SIGHUP): cancel the answer under way, then leave.
  const onStop = () => {
    current?.abort(new Error('cancelled: the process was asked to stop'));
    input.close();
  };
  input.on('SIGINT', onInterrupt);
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onStop);
  process.on('SIGHUP', onStop);
  try {
    // The line iterator buffers, so lines piped in faster than answers come are all asked, in order.
    let closed = false;
    input.on('close', () => {
      closed = true;
    });
    const prompt = () => {
      if (!closed && stdin.isTTY) input.prompt();
    };
    input.setPrompt('you> ');
    prompt();
    for await (const raw of input) {
      const line = raw.trim();
      if (!line) {
        prompt();
        continue;
      }
      if (line === '/exit' || line === '/quit') break;
      current = new AbortController();
      try {
        // The same limit as `cadre ask`: a line past it is refused before any model call, and the chat goes on.
        checkQuestionLength(line, cadre.config.limits?.maxQuestionChars);
        asked = true;
        const { envelope } = await askOnce(cadre, {
          question: line,
          ...(values.agent ? { agent: values.agent } : {}),
          sessionId,
          rootLimits: limits.rootLimits,
          ...(limits.treeBudget ? { limits: { treeBudget: limits.treeBudget } } : {}),
          userId: context.userId,
          signal: current.signal,
          stderr: context.stderr,
          // The conversation owns the terminal's lines, so in chat only the flags decide approvals.
          approval: { mode: approval, stdin: { isTTY: false } as NodeJS.ReadableStream & { isTTY: boolean } },
        });
        context.stdout.write(`\n${await answerText(envelope.summary, context.stdout)}\n`);
        // As `cadre ask` does: the answer's cited links on stderr, verified ones marked, the rest flagged.
        const listed = sourcesReport(envelope.sources);
        if (listed.length) context.stderr.write(`${listed.join('\n')}\n\n`);
        if (envelope.status !== 'ok') context.stderr.write(`(status: ${envelope.status})\n`);
      } catch (error) {
        reportError(error, context.stderr);
      } finally {
        current = undefined;
      }
      prompt();
    }
  } finally {
    input.close();
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onStop);
    process.off('SIGHUP', onStop);
    if (createdHere && !asked) await cadre.sessions.delete(context.userId, sessionId).catch(() => {});
    await cadre.close();
  }
  context.stderr.write(
    createdHere && !asked
      ? 'Nothing was asked; no session kept.\n'
      : `Session saved: cadre ask --session ${sessionId} "..."\n`,
  );
  return EXIT.ok;
};
