import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { agentDefinitionSchema } from '../../core/agent-definition.ts';
import { approvalRuleFor } from '../../core/approval-rules.ts';
import { Runtime } from '../../core/runtime.ts';
import { ToolRegistry } from '../../core/tool-registry.ts';
import { ScriptedModel } from '../../models/scripted-model.ts';
import { codingTools } from './index.ts';

const base = mkdtempSync(path.join(tmpdir(), 'cadre-approval-paths-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
/** The README's own example rules. */
const rules = { allow: ['write_file(src/*)', 'bash(npm test:*)'], ask: [], deny: [] };

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(base, 'ws-'));
  mkdirSync(path.join(root, 'src'));
  mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true });
  writeFileSync(path.join(root, 'package.json'), '{"scripts":{"test":"vitest"}}');
});

/** One write_file call by a scripted coder under `rules`; what was asked and what the file holds after. */
async function writeAs(target: string) {
  const model = new ScriptedModel((request) =>
    request.toolResults.length
      ? { text: 'done' }
      : { toolCalls: [{ name: 'write_file', input: { path: target, content: 'PWNED' } }] },
  );
  const runtime = new Runtime({
    agents: new Map([
      ['coder', agentDefinitionSchema.parse({ name: 'coder', description: 'c', tools: ['write_file'] })],
    ]),
    tools: new ToolRegistry(codingTools({ workspace: root, env: {} })),
    resolveModel: () => model,
    mainModel: 'scripted:x',
    approvals: {
      rules,
      approver: {
        decide: async (request) => {
          asked.push(String((request.input as { path: string }).path));
          return { approved: false, by: 'person', reason: 'no' };
        },
      },
      timeoutMs: 5000,
    },
  });
  const asked: string[] = [];
  await runtime.run({ agent: 'coder', task: 'write' });
  return asked;
}

describe('approval rules match where a path really goes', () => {
  it('asks before src/../package.json, which write_file(src/*) must not allow', async () => {
    expect(await writeAs('src/../package.json')).toEqual(['src/../package.json']);
    expect(readFileSync(path.join(root, 'package.json'), 'utf8')).toContain('vitest');
  });

  it('asks before src/../.git/hooks/pre-commit', async () => {
    expect(await writeAs('src/../.git/hooks/pre-commit')).toEqual(['src/../.git/hooks/pre-commit']);
  });

  it('asks before a path under src/ that is a symlink to a file outside src/', async () => {
    symlinkSync(path.join(root, 'package.json'), path.join(root, 'src', 'config.json'));
    expect(await writeAs('src/config.json')).toEqual(['src/config.json']);
    expect(readFileSync(path.join(root, 'package.json'), 'utf8')).toContain('vitest');
  });

  it('still allows what the rule names, spelled plainly or with ./', async () => {
    expect(await writeAs('src/new.ts')).toEqual([]);
    expect(await writeAs('./src/other.ts')).toEqual([]);
    expect(readFileSync(path.join(root, 'src', 'other.ts'), 'utf8')).toBe('PWNED');
  });

  it('lets deny rules see the resolved path as well as the spelled one', () => {
    const deny = { allow: [], ask: [], deny: ['write_file(.git/*)'] };
    const decision = approvalRuleFor(deny, {
      tool: 'write_file',
      input: { path: 'src/../.git/hooks/pre-commit' },
      toolAsks: true,
      agentAsks: false,
    });
    expect(decision.rule).toBe('deny');
  });
});
