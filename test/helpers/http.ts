// Raw HTTP requests to a server on 127.0.0.1 (node:http, not fetch): the test sets every
// header itself, Host included, so guards see exactly what a client sent.
import { request } from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: Record<string, unknown>;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed JSON, checked by the assertions
}

/** A caller for the server on `port`: JSON bodies (a string is sent as it is), latin1 text. */
export function httpCaller(port: number) {
  return (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpAnswer> =>
    new Promise((resolve, reject) => {
      const payload =
        body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          headers: {
            host: `127.0.0.1:${port}`,
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString('latin1')));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text,
              json: () => JSON.parse(text), // eslint-disable-line @typescript-eslint/no-unsafe-return -- see `json` above
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}
