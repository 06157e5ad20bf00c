import type { Session } from '../app/sessions.ts';
import type { RunTree } from '../core/index.ts';
import { withoutControls } from './terminal-text.ts';
import { renderTree } from './tree-view.ts';

/** Earlier turns shown when a session is continued; older ones are counted, not printed. */
const SHOWN_TURNS = 10;
/** Lines of each earlier answer shown. */
const ANSWER_LINES = 20;

/**
 * The earlier turns of a continued session, as they were seen: each question, the tree of runs that
 * answered it (sub-agents included), and the answer.
 */
export async function sessionReplay(
  session: Session,
  runTree: (runId: string) => Promise<RunTree | undefined>,
  options: { width: number },
): Promise<string> {
  const messages = session.messages;
  const questions = messages.filter((message) => message.role === 'user').length;
  if (!questions) return '';
  let start = 0;
  let seen = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]!.role === 'user' && ++seen === SHOWN_TURNS) {
      start = index;
      break;
    }
  }
  const lines: string[] = [];
  const left = questions - Math.min(questions, SHOWN_TURNS);
  lines.push(
    `── earlier in this session: ${questions} question${questions === 1 ? '' : 's'}${left ? ` (the first ${left} not shown)` : ''} ──`,
  );
  for (const message of messages.slice(start)) {
    if (message.role === 'user') {
      lines.push(`you> ${withoutControls(message.content)}`);
      continue;
    }
    const tree = message.runId ? await runTree(message.runId) : undefined;
    if (tree) {
      const ended = tree.endedAt ? Date.parse(tree.endedAt) : Date.now();
      lines.push(...renderTree(tree, ended, options.width));
    }
    const answer = withoutControls(message.content).split('\n');
    lines.push(...answer.slice(0, ANSWER_LINES));
    if (answer.length > ANSWER_LINES)
      lines.push(`… (${answer.length - ANSWER_LINES} more lines: cadre runs show ${message.runId ?? ''})`);
    lines.push('');
  }
  lines.push('── now ──');
  return `${lines.join('\n')}\n`;
}
