import { Hono } from 'hono';
import { CadreError, UserError } from '../../core/errors.ts';
import type { ServerEnv } from '../server-env.ts';

/**
 * `POST /api/documents` (multipart, one or more `file` fields), `GET /api/documents`,
 * `GET /api/documents/search?q=`, `DELETE /api/documents/:id`: the caller's documents only, through the
 * same use cases as `cadre docs`.
 */
export function documentRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/', async (c) => c.json({ documents: await c.var.cadre.documents.list(c.var.userId) }));
  routes.get('/search', async (c) => {
    const limit = Math.min(50, Math.max(1, Number(c.req.query('limit') ?? 10) || 10));
    const query = c.req.query('q') ?? '';
    return c.json({ results: await c.var.cadre.documents.search(c.var.userId, { query, limit }) });
  });
  routes.post('/', async (c) => {
    const form = await c.req.parseBody({ all: true }).catch(() => {
      throw new UserError('bad_request', 'Upload files as multipart/form-data, each in a "file" field.');
    });
    const fields = form.file === undefined ? [] : Array.isArray(form.file) ? form.file : [form.file];
    const files = fields.filter((field): field is File => typeof field !== 'string');
    if (files.length === 0) throw new UserError('bad_request', 'No files: send each one in a "file" field.');
    // One by one, so a refused file (wrong content, too large) does not lose the others.
    const documents = [];
    const errors: Array<{ filename: string; code: string; message: string }> = [];
    for (const file of files) {
      const filename = file.name || 'upload';
      try {
        documents.push(
          await c.var.cadre.documents.add(c.var.userId, {
            filename,
            bytes: new Uint8Array(await file.arrayBuffer()),
            ...(file.type ? { mimeType: file.type } : {}),
          }),
        );
      } catch (error) {
        if (!(error instanceof CadreError)) throw error;
        errors.push({ filename, code: error.code, message: error.message });
      }
    }
    // Every file refused: the request failed; some refused: 200 with them listed.
    if (documents.length === 0) return c.json({ documents, errors, error: errors[0] }, 400);
    return c.json({ documents, errors });
  });
  routes.delete('/:id', async (c) => {
    await c.var.cadre.documents.remove(c.var.userId, c.req.param('id'));
    return c.json({ deleted: true });
  });
  return routes;
}
