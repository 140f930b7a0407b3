// GET /api/artifacts/:id: a registered artifact's bytes, as an attachment.
import type { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { ProctorError } from '../../errors.js';
import type { RouteContext } from './context.js';

export function artifactRoutes(app: Hono, ctx: RouteContext): void {
  const { store, artifacts } = ctx;
  app.get('/api/artifacts/:id', async (c) => {
    const record = await store.getArtifact(c.req.param('id'));
    if (!record) throw new ProctorError('ARTIFACT_NOT_FOUND', 'no such artifact');
    // Opening rechecks containment, regular-file status, size and checksum before any byte
    // is sent; the bytes are hashed again while they flow.
    const download = await artifacts.open(record);
    c.header(
      'Content-Type',
      record.mediaType.startsWith('text/')
        ? 'text/plain; charset=utf-8'
        : 'application/octet-stream',
    );
    c.header('Content-Length', String(download.size));
    c.header(
      'Content-Disposition',
      `attachment; filename="${record.relPath.split('/').pop() ?? 'artifact'}"`,
    );
    return stream(c, async (out) => {
      for await (const chunk of download.stream) await out.write(chunk as Uint8Array);
    });
  });
}
