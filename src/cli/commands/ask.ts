import { parseArgs } from 'node:util';
import { UserError } from '../../core/errors.ts';
import { approvalMode } from '../approval-prompt.ts';
import { askOnce } from '../ask-once.ts';
import { type CliCommand, openCadre } from '../cli-context.ts';
import { EXIT, reportError } from '../errors.ts';
import { reportSetupNotes } from '../setup-notes.ts';
import { workspaceOption } from '../workspace-option.ts';

/** `cadre ask "QUESTION" [--agent NAME] [--model P:M] [--json] [--session ID] [--workspace DIR]` */
export const askCommand: CliCommand = async (args, context) => {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      agent: { type: 'string' },
      model: { type: 'string' },
      json: { type: 'boolean', default: false },
      session: { type: 'string' },
      workspace: { type: 'string' },
      config: { type: 'string' },
      input: { type: 'string', multiple: true },
      'approve-all': { type: 'boolean', default: false },
      'deny-all': { type: 'boolean', default: false },
    },
  });
  const question = positionals.join(' ').trim();
  if (!question)
    throw new UserError('usage', 'usage: cadre ask "QUESTION" [--agent NAME] [--model P:M] [--json]');
  const cadre = await openCadre(context, {
    ...values,
    ...(values.workspace ? { workspace: workspaceOption(values.workspace, context.cwd) } : {}),
  });
  reportSetupNotes(cadre, context.stderr);

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
      ...(values.session ? { sessionId: values.session } : {}),
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
    if (values.json) {
      const { answer, status, sessionId, run, usage } = result;
      context.stdout.write(`${JSON.stringify({ answer, status, sessionId, run, usage }, null, 2)}\n`);
    } else if (envelope.status !== 'error') {
      // An error's summary is the reason, which goes to stderr below; anything else is (partial) answer.
      context.stdout.write(`${envelope.summary}\n`);
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
    await cadre.close();
  }
};

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
