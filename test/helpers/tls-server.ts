// A certificate authority of the test's own (openssl) and an HTTPS server on 127.0.0.1 signed
// by it, answering as just enough of each registry for one client request: npm's ping, a pip
// simple index, a Go module proxy's .info, a cargo registry (its git index through
// `git http-backend`, and its search API), and a plain file (apt-helper, curl). Every request
// is recorded, so a test sees which clients got through the TLS handshake.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { onCleanup, tempDir } from './temp.js';

export interface TlsServer {
  readonly port: number;
  readonly url: string;
  /** The CA certificate (PEM) that signed the server's. */
  readonly ca: Buffer;
  /** The paths requested so far, in order. */
  readonly requests: string[];
}

/** A fresh CA and a server certificate for 127.0.0.1 signed by it; the folder holding them. */
function makeCertificates(): string {
  const dir = tempDir('proctor-tls-');
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=Proctor test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
    '-out',
    'server.crt',
  );
  return dir;
}

/** A bare git repository holding a cargo index whose config.json points at `url`. */
function cargoIndex(root: string, url: string): void {
  const work = join(root, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'config.json'), JSON.stringify({ dl: `${url}/dl`, api: url }));
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd,
      stdio: 'pipe',
    });
  git(work, 'init', '-q', '-b', 'master');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'index');
  git(root, 'clone', '-q', '--bare', work, join(root, 'index.git'));
}

/** Starts the server; it is closed after the test. */
export async function startTlsServer(): Promise<TlsServer> {
  const certs = makeCertificates();
  const requests: string[] = [];
  const gitRoot = tempDir('proctor-tls-git-');
  let url = '';
  const server: Server = createServer(
    { key: readFileSync(join(certs, 'server.key')), cert: readFileSync(join(certs, 'server.crt')) },
    (req, res) => {
      const path = req.url ?? '/';
      requests.push(path);
      const [pathname = '/', query = ''] = path.split('?');
      if (pathname.startsWith('/index.git/')) {
        // Smart HTTP through git's own CGI, so that libgit2 (cargo) and git alike can fetch.
        const cgi = spawn('git', ['http-backend'], {
          env: {
            ...process.env,
            GIT_PROJECT_ROOT: gitRoot,
            GIT_HTTP_EXPORT_ALL: '1',
            PATH_INFO: pathname,
            QUERY_STRING: query,
            REQUEST_METHOD: req.method ?? 'GET',
            CONTENT_TYPE: req.headers['content-type'] ?? '',
          },
          stdio: ['pipe', 'pipe', 'ignore'],
        });
        req.pipe(cgi.stdin);
        const chunks: Buffer[] = [];
        cgi.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
        cgi.on('close', () => {
          const out = Buffer.concat(chunks);
          const end = out.indexOf('\r\n\r\n');
          const head = out.subarray(0, end).toString('latin1');
          let status = 200;
          for (const line of head.split('\r\n')) {
            const [name = '', ...rest] = line.split(':');
            const value = rest.join(':').trim();
            if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
            else if (name !== '') res.setHeader(name, value);
          }
          res.writeHead(status);
          res.end(out.subarray(end + 4));
        });
        return;
      }
      const send = (type: string, body: string) => {
        res.writeHead(200, { 'content-type': type });
        res.end(body);
      };
      if (pathname === '/-/ping') return send('application/json', '{}');
      if (pathname === '/simple/demo/') {
        return send(
          'text/html',
          `<html><body><a href="${url}/files/demo-1.0.tar.gz">demo-1.0.tar.gz</a></body></html>`,
        );
      }
      if (pathname === '/go/example.com/demo/@v/v1.0.0.info') {
        return send('application/json', '{"Version":"v1.0.0","Time":"2020-01-01T00:00:00Z"}');
      }
      if (pathname === '/api/v1/crates') {
        return send('application/json', '{"crates":[],"meta":{"total":0}}');
      }
      if (pathname === '/file') return send('text/plain', 'hello over tls\n');
      res.writeHead(404);
      res.end();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const { port } = server.address() as AddressInfo;
  url = `https://127.0.0.1:${port}`;
  cargoIndex(gitRoot, url);
  return { port, url, ca: readFileSync(join(certs, 'ca.crt')), requests };
}
