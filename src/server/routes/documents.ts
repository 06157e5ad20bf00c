import { type Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { AddedDocument, IngestProgress } from '../../app/documents.ts';
import { CadreError, UserError } from '../../core/index.ts';
import { httpError } from '../http-errors.ts';
import { readUploadedFiles } from '../multipart-files.ts';
import type { ServerEnv } from '../server-env.ts';

/** A refused file: its name, the error's code and message, and the status it alone would have had. */
interface RefusedFile {
  filename: string;
  code: string;
  message: string;
  status: number;
}

/** Files at least this large report their progress (parsing, indexing) on an SSE upload. */
const PROGRESS_FROM_BYTES = 1024 * 1024;

/**
 * `POST /api/documents` (multipart, one or more `file` fields), `GET /api/documents`,
 * `GET /api/documents/search?q=`, `DELETE /api/documents/:id`: the caller's documents only, through the
 * same use cases as `cadre docs`. An upload answers `{documents, errors}` (each refused file with its
 * reason); a client that sends `Accept: text/event-stream` gets `progress` events for large files as they
 * are parsed and indexed, then that same answer as a `done` event.
 */
export interface UploadLimits {
  /** Files one upload request may carry. */
  maxFilesPerUpload: number;
  /** Uploads one user may have in progress at once. */
  maxConcurrentUploads: number;
  /** Uploads the whole server has in progress at once (every user together). */
  maxConcurrentUploadsTotal: number;
}

export const DEFAULT_UPLOAD_LIMITS: UploadLimits = {
  maxFilesPerUpload: 20,
  maxConcurrentUploads: 2,
  maxConcurrentUploadsTotal: 6,
};

export function documentRoutes(limits: UploadLimits = DEFAULT_UPLOAD_LIMITS): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  // An upload holds its body in memory and a parse worker per file: both are bounded before the body is
  // read (12 concurrent 45 MiB uploads took 1.25 GB; 2,000 tiny files in one request ran for minutes).
  const uploading = new Map<string, number>();
  let uploadingTotal = 0;
  routes.get('/', async (c) => c.json({ documents: await c.var.cadre.documents.list(c.var.userId) }));
  routes.get('/search', async (c) => {
    const limit = Math.min(50, Math.max(1, Number(c.req.query('limit') ?? 10) || 10));
    const query = c.req.query('q') ?? '';
    const types = c.req.query('type');
    const document = c.req.query('document');
    const results = await c.var.cadre.documents.search(c.var.userId, {
      query,
      limit,
      ...(types ? { types: types.split(',') } : {}),
      ...(document ? { documentIds: [document] } : {}),
    });
    return c.json({ results });
  });
  /** Takes one of the caller's upload slots (429 when none is free); the function gives it back, once. */
  const takeSlot = (userId: string): (() => void) => {
    const mine = uploading.get(userId) ?? 0;
    if (mine >= limits.maxConcurrentUploads || uploadingTotal >= limits.maxConcurrentUploadsTotal) {
      throw new UserError(
        'too_many_uploads',
        mine >= limits.maxConcurrentUploads
          ? `You have ${mine} uploads in progress, the most at once (server.maxConcurrentUploads); send this one when one has finished.`
          : 'The server is parsing as many uploads as it takes at once (server.maxConcurrentUploadsTotal); try again shortly.',
        {},
      );
    }
    uploading.set(userId, mine + 1);
    uploadingTotal++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      uploadingTotal--;
      const left = (uploading.get(userId) ?? 1) - 1;
      if (left > 0) uploading.set(userId, left);
      else uploading.delete(userId);
    };
  };
  routes.post('/', async (c) => {
    const release = takeSlot(c.var.userId);
    let streaming = false;
    try {
      return await upload(
        c,
        () => {
          streaming = true;
        },
        release,
      );
    } finally {
      if (!streaming) release();
    }
  });
  const upload = async (c: Context<ServerEnv>, handOff: () => void, release: () => void) => {
    const files = await readUploadedFiles(c.req.raw, limits.maxFilesPerUpload);
    if (files.length === 0) throw new UserError('bad_request', 'No files: send each one in a "file" field.');
    const { cadre, userId } = c.var;
    // One by one, so a refused file (wrong content, too large) does not lose the others.
    const addAll = async (onProgress?: (progress: IngestProgress) => void) => {
      const documents: AddedDocument[] = [];
      const errors: RefusedFile[] = [];
      for (const file of files) {
        const filename = file.filename || 'upload';
        try {
          const { bytes } = file;
          const reportProgress = onProgress && bytes.byteLength >= PROGRESS_FROM_BYTES;
          documents.push(
            await cadre.documents.add(
              userId,
              { filename, bytes, ...(file.mimeType ? { mimeType: file.mimeType } : {}) },
              { signal: c.req.raw.signal, ...(reportProgress ? { onProgress } : {}) },
            ),
          );
        } catch (error) {
          if (!(error instanceof CadreError)) throw error;
          errors.push({
            filename,
            code: error.code,
            message: error.message,
            status: httpError(error).status,
          });
        }
      }
      return { documents, errors };
    };
    if ((c.req.header('accept') ?? '').includes('text/event-stream')) {
      // The slot is held until the stream's files are all parsed, not given back with the response head.
      handOff();
      return streamSSE(c, async (stream) => {
        try {
          const writes: Array<Promise<void>> = [];
          const result = await addAll((progress) => {
            writes.push(stream.writeSSE({ event: 'progress', data: JSON.stringify(progress) }));
          });
          await Promise.all(writes);
          await stream.writeSSE({ event: 'done', data: JSON.stringify(result) });
        } finally {
          release();
        }
      });
    }
    const { documents, errors } = await addAll();
    // Every file refused: the request failed as its first file did (413 too large, 400 unreadable, ...).
    if (documents.length === 0)
      return c.json({ documents, errors, error: errors[0] }, errors[0]!.status as 400);
    return c.json({ documents, errors });
  };
  routes.delete('/:id', async (c) => {
    await c.var.cadre.documents.remove(c.var.userId, c.req.param('id'));
    return c.json({ deleted: true });
  });
  return routes;
}
