import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { UserError } from '../core/index.ts';

/** One uploaded file, whole. */
export interface UploadedFile {
  filename: string;
  mimeType: string | undefined;
  bytes: Uint8Array;
}

/** Form fields (not files) an upload may carry besides its files, and how long each may be. */
const MAX_FIELDS = 20;
const MAX_FIELD_BYTES = 8 * 1024;

/**
 * The `file` fields of a multipart upload, read as the body streams in (busboy), with the parts and files
 * counted as they arrive: the request is refused at the first part past the limit, not after the whole
 * form has been built in memory (a 48 MiB body of 700,000 empty parts took 1.1 GB and stalled the event
 * loop for 15 s when the form was parsed whole). What is not read of the body is discarded by the server
 * after the answer (bounded), so the client sees the refusal rather than a reset.
 */
export function readUploadedFiles(request: Request, maxFiles: number): Promise<UploadedFile[]> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!request.body || !/^multipart\/form-data\b/i.test(contentType)) return Promise.reject(notMultipart());
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: {
        files: maxFiles,
        fields: MAX_FIELDS,
        parts: maxFiles + MAX_FIELDS,
        fieldSize: MAX_FIELD_BYTES,
      },
    });
  } catch {
    return Promise.reject(notMultipart());
  }
  const source = Readable.fromWeb(request.body as unknown as NodeReadableStream<Uint8Array>);
  return new Promise<UploadedFile[]>((resolve, reject) => {
    const files: UploadedFile[] = [];
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      source.unpipe(parser);
      // The rest of the body is not read here; the server discards what is left of it after the answer.
      source.destroy();
      parser.removeAllListeners('file');
      reject(error);
    };
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || settled) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        files.push({
          filename: info.filename ?? '',
          mimeType: info.mimeType || undefined,
          bytes: new Uint8Array(Buffer.concat(chunks)),
        });
      });
    });
    parser.on('filesLimit', () => fail(tooManyFiles(maxFiles)));
    parser.on('partsLimit', () => fail(tooManyParts(maxFiles)));
    parser.on('fieldsLimit', () => fail(tooManyParts(maxFiles)));
    parser.on('error', () => fail(notMultipart()));
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      resolve(files);
    });
    source.on('error', (error) => fail(error));
    source.pipe(parser);
  });
}

function notMultipart(): UserError {
  return new UserError('bad_request', 'Upload files as multipart/form-data, each in a "file" field.');
}

function tooManyFiles(max: number): UserError {
  return new UserError(
    'too_many_files',
    `This upload has more than ${max} files; one request may carry at most ${max} (server.maxFilesPerUpload). Send them in several.`,
    { max },
  );
}

function tooManyParts(max: number): UserError {
  return new UserError(
    'too_many_files',
    `This upload has more than ${max + MAX_FIELDS} parts; one request may carry at most ${max} files (server.maxFilesPerUpload) and ${MAX_FIELDS} other fields.`,
    { max },
  );
}
