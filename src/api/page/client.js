// @ts-check
// The page's client of the local JSON API: fetch wrappers that turn a non-2xx answer into an
// ApiError with the API's code and message, query strings, and bounded cursor paging.

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * Fetches JSON; a non-2xx answer becomes an ApiError with the API's code and message.
 * @param {string} path
 * @param {RequestInit & { headers?: Record<string, string> }} [init]
 * @returns {Promise<any>}
 */
export async function api(path, init = {}) {
  const response = await fetch(path, {
    ...init,
    headers: { Accept: 'application/json', ...init.headers },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = body && body.error ? body.error : {};
    throw new ApiError(
      response.status,
      error.code || 'HTTP_' + response.status,
      error.message || response.statusText || 'request failed',
    );
  }
  return body;
}

/**
 * Every mutation is a POST of an empty JSON object.
 * @param {string} path
 */
export function post(path) {
  return api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
}

/**
 * `?a=1&b=x`, leaving out empty values; an array value repeats its parameter.
 * @param {Record<string, unknown>} params
 */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null && one !== '') search.append(key, String(one));
    }
  }
  const text = search.toString();
  return text ? '?' + text : '';
}

/**
 * Follows cursors for up to `pageCount` pages; returns the items and the cursor after them.
 * A refresh re-reads every page loaded so far (a bounded number), so that no row further
 * down keeps a stale status.
 * @param {string} path
 * @param {Record<string, unknown>} params
 * @param {number} pageCount
 * @returns {Promise<{ items: any[], nextCursor: string | null }>}
 */
export async function pages(path, params, pageCount) {
  const items = [];
  let cursor = null;
  for (let i = 0; i < pageCount; i++) {
    const page = await api(path + query({ ...params, cursor }));
    items.push(...page.items);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return { items, nextCursor: cursor };
}

/**
 * A path segment, encoded.
 * @param {string | number} id
 */
export const segment = (id) => encodeURIComponent(String(id));
