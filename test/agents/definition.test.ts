// Agent definitions: the built-ins parse, and every bad input is one line naming the file and
// the key at fault.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  builtinAgent,
  builtinAgentNames,
  fill,
  installDigest,
  loadAgentDefinition,
  parseAgentDefinition,
  resolveAgent,
} from '../../src/agents/index.js';
import { ProctorError } from '../../src/errors.js';
import { tempDir } from '../helpers/temp.js';

const GOOD = `
name = "mine"
protocol = "openai-chat"
prompt = "argument"
command = ["my-agent", "--task", "{{prompt}}", "--model", "{{model}}"]
logs = ["{{home}}/.mine/log"]

[install]
npm = "@me/my-agent@1.2.3"

[env]
MY_BASE_URL = "{{base_url}}/v1"
MY_API_KEY = "{{token}}"

[[files]]
path = ".mine/config.json"
content = '{"telemetry": false, "url": "{{base_url}}"}'
`;

/** GOOD, installed from PyPI. */
const PIP = GOOD.replace('npm = "@me/my-agent@1.2.3"', 'pip = "my-agent==1.2.3"');

/** The error of parsing `text` as definition file `f.toml`. */
function failure(text: string): ProctorError {
  try {
    parseAgentDefinition(text, 'f.toml', '/defs');
  } catch (error) {
    if (error instanceof ProctorError) return error;
    throw error;
  }
  throw new Error('expected the definition to be refused');
}

/** GOOD with `from` replaced by `to`. */
const edited = (from: string, to: string) => {
  expect(GOOD).toContain(from);
  return GOOD.replace(from, to);
};

describe('agent definitions', () => {
  it('parses a good definition, its host paths resolved against its folder', () => {
    const d = parseAgentDefinition(GOOD, 'f.toml', '/defs');
    expect(d).toMatchObject({
      name: 'mine',
      protocol: 'openai-chat',
      prompt: 'argument',
      install: { npm: '@me/my-agent@1.2.3', node: 'host' },
      env: { MY_API_KEY: '{{token}}' },
      files: [{ path: '.mine/config.json' }],
    });
    const t = parseAgentDefinition(
      edited('npm = "@me/my-agent@1.2.3"', 'tarball = "pkgs/agent.tgz"'),
      'f.toml',
      '/defs',
    );
    expect(t.install.tarball).toBe('/defs/pkgs/agent.tgz');
  });

  it('reads every built-in, each named as its file, with a version command and no key', () => {
    const names = builtinAgentNames();
    expect(names).toEqual([
      'aider',
      'claude-code',
      'codex',
      'gemini-cli',
      'mini-swe-agent',
      'opencode',
      'qwen-code',
    ]);
    for (const name of names) {
      const d = builtinAgent(name);
      expect(d.name).toBe(name);
      expect(d.versionCommand).toBeDefined();
      if (d.install.pip) for (const pin of d.install.pip) expect(pin).toMatch(/==\d+\.\d+\.\d+$/);
      else expect(d.install.npm).toMatch(/@\d+\.\d+\.\d+$/);
      // The only credential any built-in hands its agent is the run token.
      const secrets = Object.entries(d.env).filter(([k]) => /KEY|TOKEN/.test(k));
      expect(secrets.length).toBeGreaterThan(0);
      for (const [, value] of secrets) expect(value).toBe('{{token}}');
    }
    expect(resolveAgent('qwen-code').name).toBe('qwen-code');
    expect(builtinAgent('mini-swe-agent').install.pip).toEqual(['mini-swe-agent==2.4.6']);
    expect(builtinAgent('aider').install.pip).toEqual(['aider-chat==0.86.2']);
  });

  it('reads install.pip as one exact pin or a list of them, into a digest of its own', () => {
    const one = parseAgentDefinition(PIP, 'f.toml');
    expect(one.install).toEqual({ pip: ['my-agent==1.2.3'], node: 'host' });
    const list = parseAgentDefinition(
      PIP.replace(
        '"my-agent==1.2.3"',
        '["my-agent==1.2.3", "my_helper.x==0.10.0rc1", "B==2.0.post1"]',
      ),
      'f.toml',
    );
    expect(list.install.pip).toEqual(['my-agent==1.2.3', 'my_helper.x==0.10.0rc1', 'B==2.0.post1']);
    const other = parseAgentDefinition(PIP.replace('1.2.3', '1.2.4'), 'f.toml');
    expect(installDigest(one, 1)).not.toBe(installDigest(other, 1));
    expect(installDigest(one, 1)).not.toBe(installDigest(list, 1));
    // An npm definition's digest is what it was before pip existed (no pip key in what is
    // hashed), so the npm layers already built stay valid.
    const before = createHash('sha256')
      .update(
        JSON.stringify({
          layout: 1,
          name: 'mine',
          npm: '@me/my-agent@1.2.3',
          node: 'host',
          hostNode: process.version,
        }),
      )
      .digest('hex');
    expect(installDigest(parseAgentDefinition(GOOD, 'f.toml'), 1)).toBe(before);
  });

  const pipCases: Array<[string, string, string]> = [
    [
      'an unpinned project',
      '"aider-chat"',
      '"aider-chat" is not pinned; expected an exact version, such as aider-chat==1.2.3',
    ],
    [
      'a range',
      '"aider-chat>=0.86"',
      '"aider-chat>=0.86" is a range; expected one exact version, such as name==1.2.3',
    ],
    [
      'a compatible-release range',
      '"aider-chat~=0.86.2"',
      '"aider-chat~=0.86.2" is a range; expected one exact version, such as name==1.2.3',
    ],
    [
      'two bounds',
      '"aider-chat==0.86.2,<1"',
      '"aider-chat==0.86.2,<1" is a range; expected one exact version, such as name==1.2.3',
    ],
    [
      'a wildcard',
      '"aider-chat==0.86.*"',
      '"aider-chat==0.86.*" is a range; expected one exact version, such as name==1.2.3',
    ],
    [
      'a URL',
      '"https://example.invalid/aider.whl"',
      '"https://example.invalid/aider.whl" is a URL or a direct reference; expected a pin such as name==1.2.3 from the index',
    ],
    [
      'a direct reference',
      '"aider @ git+https://example.invalid/a.git"',
      '"aider @ git+https://example.invalid/a.git" is a URL or a direct reference; expected a pin such as name==1.2.3 from the index',
    ],
    ['an editable install', '"-e ."', '"-e ." is a pip option; expected a pin such as name==1.2.3'],
    [
      'an index option',
      '"--index-url=http://example.invalid"',
      '"--index-url=http://example.invalid" is a pip option; expected a pin such as name==1.2.3',
    ],
    [
      'extras',
      '"aider-chat[playwright]==0.86.2"',
      '"aider-chat[playwright]==0.86.2" asks for extras; expected a plain pin such as name==1.2.3',
    ],
    [
      'a version with letters',
      '"aider-chat==latest"',
      '"aider-chat==latest" is not an exact pin; expected name==X.Y.Z',
    ],
    [
      'a bad pin in a list',
      '["aider-chat==0.86.2", "litellm"]',
      '"litellm" is not pinned; expected an exact version, such as litellm==1.2.3',
    ],
  ];
  for (const [what, value, message] of pipCases) {
    it(`refuses ${what} in install.pip in one line naming the key`, () => {
      const error = failure(PIP.replace('"my-agent==1.2.3"', value));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).not.toContain('\n');
      expect(error.message).toMatch(/^agent definition f\.toml: install\.pip(\[\d\])?: /);
      expect(error.message).toContain(message);
    });
  }

  it('refuses install.pip that is empty, not text, beside npm, or with a Node version', () => {
    expect(failure(PIP.replace('"my-agent==1.2.3"', '[]')).message).toMatch(
      /^agent definition f\.toml: install\.pip: expected at least one pin$/,
    );
    expect(failure(PIP.replace('"my-agent==1.2.3"', '3')).message).toMatch(
      /^agent definition f\.toml: install\.pip: expected a pin such as "name==1\.2\.3", or a list of them$/,
    );
    expect(failure(PIP.replace('[install]', '[install]\nnpm = "a@1.0.0"')).message).toBe(
      'agent definition f.toml: install: expected exactly one of npm, pip, tarball or binary',
    );
    expect(failure(PIP.replace('[install]', '[install]\nnode = "22.1.0"')).message).toBe(
      "agent definition f.toml: install.node: node applies to npm, tarball and binary installs; a pip install runs on the layer's own Python",
    );
  });

  it('fills placeholders, leaving other braces alone', () => {
    const values = {
      base_url: 'http://127.0.0.1:4000',
      token: 't',
      model: 'm',
      prompt: 'p',
      prompt_file: '/f',
      home: '/h',
      workdir: '/w',
    };
    expect(fill('{"u": "{{base_url}}/v1", "k": "{{token}}"} {x}', values)).toBe(
      '{"u": "http://127.0.0.1:4000/v1", "k": "t"} {x}',
    );
  });

  it('digests what is installed, not how the agent is started', () => {
    const a = parseAgentDefinition(GOOD, 'f.toml');
    const b = parseAgentDefinition(edited('"--model", ', ''), 'f.toml');
    const c = parseAgentDefinition(edited('1.2.3', '1.2.4'), 'f.toml');
    expect(installDigest(a, 1)).toBe(installDigest(b, 1));
    expect(installDigest(a, 1)).not.toBe(installDigest(c, 1));
    expect(installDigest(a, 1)).not.toBe(installDigest(a, 2));
  });

  const cases: Array<[string, string, RegExp]> = [
    [
      'an unknown key',
      edited('prompt = "argument"', 'prompt = "argument"\nretries = 3'),
      /^agent definition f\.toml: retries: unknown key$/,
    ],
    [
      'an unknown install key',
      edited('[install]', '[install]\nconda = "aider"'),
      /^agent definition f\.toml: install\.conda: unknown key$/,
    ],
    [
      'a version range',
      edited('@1.2.3', '@^1.2.0'),
      /^agent definition f\.toml: install\.npm: expected an npm package with an exact version/,
    ],
    [
      'a tag',
      edited('@1.2.3', '@latest'),
      /install\.npm: expected an npm package with an exact version/,
    ],
    [
      'two install sources',
      edited('[install]', '[install]\nbinary = "/bin/agent"'),
      /^agent definition f\.toml: install: expected exactly one of npm, pip, tarball or binary$/,
    ],
    [
      'a bad Node version',
      edited('[install]', '[install]\nnode = "22"'),
      /install\.node: expected "host" or an exact Node version/,
    ],
    [
      'a host file name that cannot be a path in the image',
      edited('npm = "@me/my-agent@1.2.3"', 'binary = "dist/my agent"'),
      /^agent definition f\.toml: install\.binary: expected a file name of letters, digits/,
    ],
    [
      'an unknown protocol',
      edited('"openai-chat"', '"grpc"'),
      /^agent definition f\.toml: protocol: expected one of openai-chat, openai-responses, anthropic-messages/,
    ],
    [
      'an unknown prompt mode',
      edited('prompt = "argument"', 'prompt = "pipe"'),
      /^agent definition f\.toml: prompt: expected one of argument, file, stdin$/,
    ],
    [
      'a missing command',
      edited('command = ["my-agent", "--task", "{{prompt}}", "--model", "{{model}}"]', ''),
      /^agent definition f\.toml: command: /,
    ],
    [
      'a real key',
      edited('MY_API_KEY = "{{token}}"', 'MY_API_KEY = "sk-live-123"'),
      /^agent definition f\.toml: env\.MY_API_KEY: a credential-like variable must be exactly "\{\{token\}\}", never a real key$/,
    ],
    [
      'a token with more around it',
      edited('MY_API_KEY = "{{token}}"', 'MY_API_KEY = "Bearer {{token}}"'),
      /env\.MY_API_KEY: a credential-like variable must be exactly/,
    ],
    [
      'a variable Proctor sets',
      edited('[env]', '[env]\nHOME = "/root"'),
      /^agent definition f\.toml: env\.HOME: set by Proctor$/,
    ],
    [
      'a bad variable name',
      edited('[env]', '[env]\n"MY-VAR" = "1"'),
      /^agent definition f\.toml: env\.MY-VAR: invalid environment name$/,
    ],
    [
      'an unknown placeholder',
      edited('{{base_url}}/v1', '{{base-url}}/v1'),
      /^agent definition f\.toml: env\.MY_BASE_URL: unknown placeholder \{\{base-url\}\}$/,
    ],
    [
      'a prompt placeholder of another mode',
      edited('"{{prompt}}"', '"{{prompt_file}}"'),
      /^agent definition f\.toml: command\[2\]: \{\{prompt_file\}\} is not allowed here\nagent definition f\.toml: command: prompt = "argument" needs \{\{prompt\}\} in command$/,
    ],
    [
      'a prompt argument with stdin',
      edited('prompt = "argument"', 'prompt = "stdin"'),
      /^agent definition f\.toml: command\[2\]: \{\{prompt\}\} is not allowed here$/,
    ],
    [
      'a file mode without the file',
      edited('prompt = "argument"', 'prompt = "file"'),
      /command: prompt = "file" needs \{\{prompt_file\}\}/,
    ],
    [
      'a settings file outside HOME',
      edited('path = ".mine/config.json"', 'path = "../etc/passwd"'),
      /^agent definition f\.toml: files\[0\]\.path: expected a relative path inside HOME/,
    ],
    [
      'an absolute settings path',
      edited('path = ".mine/config.json"', 'path = "/etc/x"'),
      /files\[0\]\.path: expected a relative path inside HOME/,
    ],
    [
      'a settings file written twice',
      edited('[[files]]', '[[files]]\npath = ".mine/config.json"\ncontent = "x"\n[[files]]'),
      /^agent definition f\.toml: files\[1\]\.path: written twice$/,
    ],
    [
      'a relative log path',
      edited('"{{home}}/.mine/log"', '"log.txt"'),
      /^agent definition f\.toml: logs\[0\]: expected an absolute path/,
    ],
    [
      'a log path with ..',
      edited('"{{home}}/.mine/log"', '"{{home}}/../etc"'),
      /^agent definition f\.toml: logs\[0\]: must not contain \.\.$/,
    ],
    [
      'a bad name',
      edited('name = "mine"', 'name = "My Agent"'),
      /^agent definition f\.toml: name: expected lowercase letters/,
    ],
    ['malformed TOML', 'name = "x', /^agent definition f\.toml: line 1, column \d+: /],
  ];
  for (const [what, text, message] of cases) {
    it(`refuses ${what} in one line per problem, naming the file and key`, () => {
      const error = failure(text);
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toMatch(message);
    });
  }

  it('refuses a file too large, or missing, naming it', () => {
    const dir = tempDir();
    const big = join(dir, 'big.toml');
    writeFileSync(big, `# ${'x'.repeat(70_000)}\n${GOOD}`);
    expect(() => loadAgentDefinition(big)).toThrow(
      new RegExp(`^agent definition ${big}: 70\\d+ bytes; at most 65536$`),
    );
    expect(() => loadAgentDefinition(join(dir, 'none.toml'))).toThrow(
      /^agent definition .*none\.toml: cannot be read: .*ENOENT/,
    );
  });

  it('names the built-ins when a name is not one', () => {
    expect(() => resolveAgent('cursor')).toThrow(
      /^no built-in agent named "cursor"; the built-ins are aider, claude-code, codex, gemini-cli, mini-swe-agent, opencode, qwen-code \(or give the path of a definition file\)$/,
    );
  });

  it('refuses a tarball it cannot read when digesting, naming the key', () => {
    const d = parseAgentDefinition(
      edited('npm = "@me/my-agent@1.2.3"', 'tarball = "missing.tgz"'),
      'f.toml',
      tempDir(),
    );
    expect(() => installDigest(d, 1)).toThrow(
      /^agent definition f\.toml: install\.tarball: cannot read .*missing\.tgz: /,
    );
  });
});
