import type { IncomingMessage } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { ResponseRefusedError } from './http-errors.ts';

/** The encodings Cadre asks for and can undo. */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/**
 * Reads a response body, undoing its content encoding, and stops as soon as the decoded size passes
 * `maxBytes`: the cap is on bytes after decompression, so a small gzip bomb is cut off early.
 */
export async function readBody(response: IncomingMessage, url: string, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  const encoding = String(response.headers['content-encoding'] ?? 'identity')
    .toLowerCase()
    .trim();
  if (encoding === 'identity' && Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw tooLarge(url, maxBytes);
  }
  const stream = decoderFor(response, encoding, url);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      total += buffer.length;
      if (total > maxBytes) throw tooLarge(url, maxBytes);
      chunks.push(buffer);
    }
  } catch (error) {
    if (ResponseRefusedError.is(error)) throw error;
    if ((error as Error).name === 'AbortError') throw error;
    throw new ResponseRefusedError(
      'network',
      url,
      `Could not read the response: ${(error as Error).message}.`,
    );
  } finally {
    response.destroy();
    if (stream !== response) stream.destroy();
  }
  return Buffer.concat(chunks, total);
}

function decoderFor(response: IncomingMessage, encoding: string, url: string): Readable {
  switch (encoding) {
    case 'identity':
    case '':
      return response;
    case 'gzip':
    case 'x-gzip':
      return pipeline(response, createGunzip(), ignore);
    case 'deflate':
      return pipeline(response, createInflate(), ignore);
    case 'br':
      return pipeline(response, createBrotliDecompress(), ignore);
    default:
      response.destroy();
      throw new ResponseRefusedError('content_type', url, `Unsupported content encoding "${encoding}".`);
  }
}

function tooLarge(url: string, maxBytes: number): ResponseRefusedError {
  return new ResponseRefusedError(
    'too_large',
    url,
    `The response is larger than ${Math.round(maxBytes / 1024)} KiB after decompression; refused.`,
  );
}

/** Errors surface through the for-await on the last stream; the pipeline callback has nothing to add. */
function ignore(): void {}
