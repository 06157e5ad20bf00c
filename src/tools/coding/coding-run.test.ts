import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { agentDefinitionSchema } from '../../core/agent-definition.ts';
import { Runtime } from '../../core/runtime.ts';
import { ToolRegistry } from '../../core/tool-registry.ts';
import { ScriptedModel } from '../../models/scripted-model.ts';
import { codingTools } from './index.ts';

const root = mkdtempSync(path.join(tmpdir(), 'cadre-coding-run-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('an edit asks first, then shows its diff in the run tree', async () => {
  writeFileSync(path.join(root, 'app.ts'), 'export const port = 80;\n');
  const model = new ScriptedModel((request) =>
    request.toolResults.length
      ? { text: 'Changed the port.' }
      : {
          toolCalls: [{ name: 'edit_file', input: { path: 'app.ts', old: 'port = 80', new: 'port = 8080' } }],
        },
  );
  const agents = new Map([
    ['coder', agentDefinitionSchema.parse({ name: 'coder', description: 'edits', tools: ['edit_file'] })],
  ]);
  const runtime = new Runtime({
    agents,
    tools: new ToolRegistry(codingTools({ workspace: root, env: {} })),
    resolveModel: () => model,
    mainModel: 'scripted:x',
  });
  const asked: string[] = [];
  const { envelope, tree } = await runtime.run({
    agent: 'coder',
    task: 'Use port 8080',
    approver: {
      decide: async (request) => {
        asked.push(request.tool);
        return { approved: true, by: 'person' };
      },
    },
  });
  expect(asked).toEqual(['edit_file']);
  expect(envelope.status).toBe('ok');
  expect(readFileSync(path.join(root, 'app.ts'), 'utf8')).toBe('export const port = 8080;\n');
  expect(tree.toolCalls[0]?.diff).toContain('-export const port = 80;\n+export const port = 8080;');
  // The model sees the diff too: it is how it knows the edit landed where it meant.
  expect(JSON.stringify(model.calls[1]?.prompt)).toContain('+export const port = 8080;');
});
