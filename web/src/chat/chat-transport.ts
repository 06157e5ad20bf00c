/**
 * useChat's default transport, reading the stream without validating each chunk against AI SDK's zod
 * schema. The stream comes from Cadre's own server, and a tree of 50 runs × 200 events is ten thousand
 * chunks: validating them took most of the page's time (measured: ~600 of ~900 ms of script in
 * bench/web-render.ts's burst). A chunk that is not JSON still fails the stream, as before.
 */
import { DefaultChatTransport, type UIMessageChunk } from 'ai';
import type { CadreMessage } from '../runs/protocol.ts';

/** Splits a server-sent-events byte stream into the `data:` payloads of its events. */
export function sseData(): TransformStream<string, string> {
  let buffer = '';
  const emit = (block: string, controller: TransformStreamDefaultController<string>) => {
    const lines = block.split(/\r?\n/).filter((line) => line.startsWith('data:'));
    if (lines.length === 0) return;
    controller.enqueue(lines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n'));
  };
  return new TransformStream({
    transform(text, controller) {
      buffer += text;
      let end = buffer.search(/\r?\n\r?\n/);
      while (end !== -1) {
        const separator = buffer.slice(end).match(/^\r?\n\r?\n/)![0].length;
        emit(buffer.slice(0, end), controller);
        buffer = buffer.slice(end + separator);
        end = buffer.search(/\r?\n\r?\n/);
      }
    },
    flush(controller) {
      if (buffer.trim()) emit(buffer, controller);
    },
  });
}

export class CadreChatTransport extends DefaultChatTransport<CadreMessage> {
  protected override processResponseStream(
    stream: ReadableStream<Uint8Array>,
  ): ReadableStream<UIMessageChunk> {
    return stream
      .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
      .pipeThrough(sseData())
      .pipeThrough(
        new TransformStream<string, UIMessageChunk>({
          transform(data, controller) {
            if (data !== '[DONE]') controller.enqueue(JSON.parse(data) as UIMessageChunk);
          },
        }),
      );
  }
}
