import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** What Cadre keeps of an MCP tool's result: the text a model reads, and structured content when given. */
export interface McpToolOutput {
  text: string;
  structuredContent?: Record<string, unknown>;
}

/**
 * Turns an MCP result's content blocks into text. Binary blocks (images, audio, blob resources) are named
 * with their type and size rather than pasted in as base64, which would only fill the model's context and
 * the event store.
 */
export function describeResult(result: CallToolResult): McpToolOutput {
  const parts: string[] = [];
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        parts.push(block.text);
        break;
      case 'image':
      case 'audio':
        parts.push(`[${block.type} ${block.mimeType}, ${approximateBytes(block.data)} bytes, not shown]`);
        break;
      case 'resource':
        if ('text' in block.resource) parts.push(block.resource.text as string);
        else parts.push(`[resource ${block.resource.uri}, binary, not shown]`);
        break;
      case 'resource_link':
        parts.push(`[resource ${block.uri}${block.name ? ` (${block.name})` : ''}]`);
        break;
    }
  }
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  if (!parts.length && structured) parts.push(JSON.stringify(structured));
  return { text: parts.join('\n'), ...(structured ? { structuredContent: structured } : {}) };
}

function approximateBytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}
