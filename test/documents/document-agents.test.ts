import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAgentFile } from '../../src/agents/loader.ts';
import { type AgentDefinition, agentDefinitionSchema } from '../../src/core/agent-definition.ts';
import type { PrepareAgent } from '../../src/core/run-agent.ts';
import { Runtime } from '../../src/core/runtime.ts';
import { ToolRegistry } from '../../src/core/tool-registry.ts';
import {
  documentContextProvider,
  documentsInstructionFragment,
  hasDocuments,
} from '../../src/documents/agent-context.ts';
import { ingestDocument } from '../../src/documents/ingest.ts';
import { type Script, ScriptedModel, type ScriptedRequest } from '../../src/models/scripted-model.ts';
import { type Database, openDatabase } from '../../src/store/sqlite/database.ts';
import { SqliteDocumentStore as DocumentStore } from '../../src/store/sqlite/documents/document-store.ts';
import { calculateTool } from '../../src/tools/compute/calculate.ts';
import { documentTools } from '../../src/tools/documents/index.ts';
import { makePdf } from '../fixtures/documents/build-fixtures.ts';
import { answeringLater } from '../helpers/later-store.ts';

/** The tools and agents over a store that answers later, as a networked backend does (every await counts). */
const storeOver = (database: Database) => answeringLater(new DocumentStore(database));

const text = (value: string) => new TextEncoder().encode(value);
const agentFile = (name: string) => fileURLToPath(new URL(`../../src/agents/${name}.md`, import.meta.url));

let db: Database;
let agents: Map<string, AgentDefinition>;
let reportId: string;
let handbookId: string;
let bobId: string;

const PAGE_ONE = 'Annual Report 2024.\nRevenue rose to 4.2 million euros.';
const PAGE_TWO = 'Termination of the Acme supply contract saved 300,000 euros.';

beforeAll(async () => {
  db = openDatabase(':memory:');
  db.prepare(
    "INSERT INTO users (id, name, created_at) VALUES ('alice', 'alice', 0), ('bob', 'bob', 0)",
  ).run();
  reportId = (
    await ingestDocument(storeOver(db), 'alice', {
      filename: 'report.pdf',
      bytes: makePdf([PAGE_ONE, PAGE_TWO], 'Annual Report'),
    })
  ).document.id;
  handbookId = (
    await ingestDocument(storeOver(db), 'alice', {
      filename: 'handbook.md',
      bytes: text('# Handbook\n\nContracts with suppliers end with ninety days notice of termination.\n'),
    })
  ).document.id;
  bobId = (
    await ingestDocument(storeOver(db), 'bob', {
      filename: 'bob.txt',
      bytes: text('Bob confidential termination memo.'),
    })
  ).document.id;
  const main = agentDefinitionSchema.parse({
    name: 'main',
    description: 'main',
    tools: ['analyze_document', 'docqa'],
    maxTurns: 4,
  });
  agents = new Map([
    ['main', main],
    ['analyze_document', loadAgentFile(agentFile('analyze_document'), 'builtin').definition],
    ['docqa', loadAgentFile(agentFile('docqa'), 'builtin').definition],
  ]);
});

function runtime(script: Script, prepareAgent: PrepareAgent = documentContextProvider(storeOver(db))) {
  const model = new ScriptedModel(script);
  const instance = new Runtime({
    agents,
    tools: new ToolRegistry([...documentTools(storeOver(db)), calculateTool]),
    resolveModel: () => model,
    mainModel: 'scripted:x',
    prepareAgent,
  });
  return { model, runtime: instance };
}

const isAnalyst = (request: ScriptedRequest) => request.system.includes("Cadre's document analyst");

describe('analyze_document', () => {
  it('declares its document_id input and the scoped search tool', () => {
    const definition = agents.get('analyze_document')!;
    expect(definition.inputs.document_id).toMatchObject({ type: 'string', required: true });
    expect(definition.tools).toContain('search_within_document');
  });

  it('sees the whole document in order and gets search results from that document only', async () => {
    const { model, runtime: instance } = runtime((request) =>
      request.index === 0
        ? { toolCalls: [{ name: 'search_within_document', input: { query: 'termination' } }] }
        : { text: 'The contract termination saved 300,000 euros (p. 2).' },
    );
    const { envelope } = await instance.run({
      agent: 'analyze_document',
      task: 'What did the termination save?',
      inputs: { document_id: reportId },
      userId: 'alice',
    });
    expect(envelope.status).toBe('ok');
    const system = model.calls[0]!.system;
    expect(system).toContain(`Document id: ${reportId}`);
    const pageOne = system.indexOf('Revenue rose to 4.2 million');
    const pageTwo = system.indexOf('Termination of the Acme supply contract');
    expect(pageOne).toBeGreaterThan(system.indexOf('[Page 1]'));
    expect(pageTwo).toBeGreaterThan(system.indexOf('[Page 2]'));
    expect(pageTwo).toBeGreaterThan(pageOne);
    expect(system).not.toContain('[Document truncated:');
    const [result] = model.calls[1]!.toolResults;
    const output = result!.output as any;
    expect(output.document_id).toBe(reportId);
    expect(output.results).toHaveLength(1);
    expect(output.results[0]).toMatchObject({ page: 2, cite: '[Annual Report, p. 2]' });
  });

  it('shows a visible truncation notice when the document is longer than the cap', async () => {
    const { model, runtime: instance } = runtime(
      [{ text: 'Partial summary.' }],
      documentContextProvider(storeOver(db), { maxChars: 40 }),
    );
    await instance.run({
      agent: 'analyze_document',
      task: 'Summarise',
      inputs: { document_id: reportId },
      userId: 'alice',
    });
    const system = model.calls[0]!.system;
    expect(system).toContain('Annual Report 2024.');
    expect(system).not.toContain('Acme supply contract');
    expect(system).toMatch(/\[Document truncated: only the first 40 of \d+ characters are shown above/);
    expect(system).toContain('search_within_document');
  });

  it('caps at 50,000 characters by default', async () => {
    const long = Array.from(
      { length: 1500 },
      (_, index) => `Paragraph ${index} of a very long policy text.`,
    ).join('\n\n');
    const { document } = await ingestDocument(storeOver(db), 'alice', {
      filename: 'long.txt',
      bytes: text(long),
    });
    const { model, runtime: instance } = runtime([{ text: 'ok' }]);
    await instance.run({
      agent: 'analyze_document',
      task: 'Summarise',
      inputs: { document_id: document.id },
      userId: 'alice',
    });
    const system = model.calls[0]!.system;
    expect(system).toContain(`only the first 50,000 of ${long.length.toLocaleString('en')} characters`);
    expect(system).toContain('Paragraph 0 of');
    expect(system).not.toContain('Paragraph 1499 of');
  });

  it('ends with a clear error for an unknown or foreign id, and the main conversation goes on', async () => {
    const { model, runtime: instance } = runtime((request) => {
      if (request.toolResults.length) return { text: 'That document is not available to you.' };
      return {
        toolCalls: [{ name: 'analyze_document', input: { task: 'Summarise it', document_id: bobId } }],
      };
    });
    const { envelope, tree } = await instance.run({ agent: 'main', task: 'Summarise doc', userId: 'alice' });
    expect(envelope.status).toBe('ok');
    expect(envelope.summary).toBe('That document is not available to you.');
    const child = tree.children[0]!;
    expect(child.agent).toBe('analyze_document');
    expect(child.status).toBe('error');
    expect(child.summary).toContain(`No document with id "${bobId}"`);
    expect(model.calls.some(isAnalyst)).toBe(false);
    expect(JSON.stringify(model.calls.at(-1)!.toolResults)).toContain('No document with id');
    expect(JSON.stringify(model.calls)).not.toContain('Bob confidential');
  });
});

describe('docqa', () => {
  it('runs several targeted searches and cites document and page', async () => {
    const { model, runtime: instance } = runtime((request) => {
      if (request.index === 0) {
        return {
          toolCalls: [
            { name: 'search_documents', input: { query: 'termination savings' } },
            { name: 'search_documents', input: { query: 'notice period', filter: { type: 'markdown' } } },
          ],
        };
      }
      const cites = request.toolResults.flatMap((result: any) =>
        result.output.results.map((hit: any) => hit.cite),
      );
      return {
        text: `Ending the Acme contract saved 300,000 euros ${cites[0]}; notice is ninety days ${cites.at(-1)}.`,
      };
    });
    const { envelope } = await instance.run({
      agent: 'docqa',
      task: 'What did ending the supplier contract save, and what notice applies?',
      userId: 'alice',
    });
    expect(envelope.status).toBe('ok');
    expect(envelope.summary).toContain('[Annual Report, p. 2]');
    expect(envelope.summary).toContain('[Handbook, p. 1]');
    expect(model.calls[0]!.toolNames.sort()).toEqual([
      'calculate',
      'query_documents',
      'read_document',
      'search_documents',
    ]);
  });

  it("finds nothing of another user's documents through any of its tools", async () => {
    const { model, runtime: instance } = runtime((request) => {
      if (request.index === 0) {
        return {
          toolCalls: [
            { name: 'search_documents', input: { query: 'confidential memo' } },
            { name: 'search_documents', input: { query: 'memo', document_id: bobId } },
            { name: 'read_document', input: { document_id: bobId } },
            { name: 'query_documents', input: { operation: 'list' } },
          ],
        };
      }
      return { text: 'Nothing found.' };
    });
    await instance.run({ agent: 'docqa', task: 'Find the memo', userId: 'alice' });
    const results = JSON.stringify(model.calls[1]!.toolResults);
    expect(results).not.toContain('Bob confidential');
    expect(results).not.toContain('bob.txt');
    expect(results).toContain(`No document with id \\"${bobId}\\"`);
  });
});

describe('main instructions', () => {
  it('mention documents only when the user has some', async () => {
    const documents = storeOver(db);
    expect(await documentsInstructionFragment(documents, 'nobody')).toBeUndefined();
    expect(await hasDocuments(documents, 'nobody')).toBe(false);
    const fragment = (await documentsInstructionFragment(documents, 'alice'))!;
    expect(fragment).toMatch(/The user has \d+ documents/);
    expect(fragment).toContain(`Annual Report (id ${reportId}, pdf, 2 pages)`);
    expect(fragment).toContain(handbookId);
    expect(fragment).toContain('docqa');
    expect(fragment).not.toContain(bobId);
  });
});
