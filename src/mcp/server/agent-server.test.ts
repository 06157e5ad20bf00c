import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { tempHome } from '../../../test/helpers/cli.ts';
import { Cadre } from '../../app/create-cadre.ts';
import { ScriptedModel } from '../../models/scripted-model.ts';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.ts';
import { createAgentMcpServer } from './agent-server.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The agent server and the SDK's client, joined in memory. */
async function connect() {
  const model = new ScriptedModel(() => ({ text: 'done' }));
  const cadre = await Cadre.create({
    env: { CADRE_HOME: tempHome(), CADRE_MODEL: 'scripted:test' },
    cwd: tempHome(),
    store: openSqliteStore(':memory:'),
    models: { 'scripted:test': model },
  });
  cleanups.push(() => cadre.close());
  const server = createAgentMcpServer(cadre, 'local');
  const client = new Client({ name: 'test', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  cleanups.push(() => client.close());
  return { client, model };
}

describe('the agent MCP server', () => {
  it('answers a malformed tools/call with Invalid params naming the field, not an internal error', async () => {
    const { client, model } = await connect();
    const refused = async (params: Record<string, unknown>) => {
      const error = await client
        .request({ method: 'tools/call', params } as never, CallToolResultSchema)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
      return (error as McpError).message;
    };
    expect(await refused({ name: 'math', arguments: 'What is 2 + 2?' })).toMatch(/arguments/);
    expect(await refused({ name: 'math', arguments: ['What is 2 + 2?'] })).toMatch(/arguments/);
    expect(await refused({ arguments: { task: 'What is 2 + 2?' } })).toMatch(/name/);
    expect(model.calls).toHaveLength(0);
    // The server is still there, and a well-formed call works.
    const result = await client.callTool({ name: 'math', arguments: { task: 'What is 2 + 2?' } });
    expect(result).toMatchObject({ isError: false, structuredContent: { status: 'ok', summary: 'done' } });
  });
});
