import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { approvalMode } from '../approval-prompt.ts';
import { askOnce } from '../ask-once.ts';
import { type CliCommand, openCadre } from '../cli-context.ts';
import { EXIT, reportError } from '../errors.ts';
import { sessionReplay } from '../session-replay.ts';
import { reportSetupNotes } from '../setup-notes.ts';
import { workspaceOption } from '../workspace-option.ts';

/**
 * `cadre chat [--session ID] [--model P:M] [--agent NAME]`: a conversation kept as a session. Ctrl-C
 * during an answer cancels that answer (recorded as cancelled); Ctrl-C or Ctrl-D at the prompt leaves.
 */
export const chatCommand: CliCommand = async (args, context) => {
  const { values } = parseArgs({
    args,
    options: {
      session: { type: 'string' },
      model: { type: 'string' },
      agent: { type: 'string' },
      workspace: { type: 'string' },
      config: { type: 'string' },
      'approve-all': { type: 'boolean', default: false },
      'deny-all': { type: 'boolean', default: false },
    },
  });
  const approval = approvalMode(values['approve-all'], values['deny-all']);
  const cadre = await openCadre(context, {
    ...values,
    ...(values.workspace ? { workspace: workspaceOption(values.workspace, context.cwd) } : {}),
  });
  reportSetupNotes(cadre, context.stderr);
  let sessionId: string;
  try {
    const earlier = values.session ? await cadre.sessions.get(context.userId, values.session) : undefined;
    sessionId = earlier?.id ?? (await cadre.sessions.create(context.userId)).id;
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
  const input = createInterface({
    input: process.stdin,
    output: context.stderr,
    terminal: Boolean(process.stdin.isTTY),
  });
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
      if (!closed && process.stdin.isTTY) input.prompt();
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
        const { envelope } = await askOnce(cadre, {
          question: line,
          ...(values.agent ? { agent: values.agent } : {}),
          sessionId,
          userId: context.userId,
          signal: current.signal,
          stderr: context.stderr,
          // The conversation owns the terminal's lines, so in chat only the flags decide approvals.
          approval: { mode: approval, stdin: { isTTY: false } as NodeJS.ReadableStream & { isTTY: boolean } },
        });
        context.stdout.write(`\n${envelope.summary}\n\n`);
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
    await cadre.close();
  }
  context.stderr.write(`Session saved: cadre ask --session ${sessionId} "..."\n`);
  return EXIT.ok;
};
