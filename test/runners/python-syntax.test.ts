// The built-in runners that are Python, and any Python they carry, must parse on the oldest
// interpreters the images they run in may have: SWE-bench's prebuilt images keep Python 3.5
// and 3.6 for old django, astropy and scikit-learn versions, and a runner runs on the image's
// own python3. No interpreter that old can be installed here, so each file is parsed with the
// grammar of 3.5 (`ast.parse(..., feature_version=(3, 5))`, which refuses f-strings, `:=`,
// positional-only parameters and the rest) by bookworm's Python 3.11, in a container.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

// Bookworm's 3.11: 3.9's parser ignores feature_version for `:=` and positional-only parameters.
const IMAGE = 'proctor-test-runners:latest';
const RUNNERS = join(ROOT, 'src/runners');

// Reads {name: source} as JSON on stdin; prints {name: null | "line N: why"}.
const CHECK = String.raw`
import ast, json, sys
out = {}
for name, src in json.load(sys.stdin).items():
    try:
        ast.parse(src, filename=name, feature_version=(3, 5))
        out[name] = None
    except SyntaxError as e:
        out[name] = "line %s: %s" % (e.lineno, e.msg)
print(json.dumps(out))
`;

function parseAs35(sources: Record<string, string>): Record<string, string | null> {
  const stdout = execFileSync(
    'docker',
    ['run', '--rm', '-i', '--network', 'none', IMAGE, 'python3', '-I', '-c', CHECK],
    { input: JSON.stringify(sources), encoding: 'utf8', timeout: 120_000 },
  );
  return JSON.parse(stdout) as Record<string, string | null>;
}

/** Every file under src/runners that is Python: a `.py` file or one with a python shebang. */
function pythonFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...pythonFiles(path));
    else if (
      name.endsWith('.py') ||
      /^#!.*python/.test(readFileSync(path, 'utf8').split('\n')[0] ?? '')
    )
      found.push(path);
  }
  return found.sort();
}

describe('the Python of the built-in runners', () => {
  it('parses with Python 3.5 grammar, every file of it', () => {
    const files = pythonFiles(RUNNERS);
    // The pytest, django and sympy runners at least, and the other dialects' Python drivers.
    for (const runner of ['pytest', 'django', 'sympy'])
      expect(files).toContain(join(RUNNERS, runner, 'run'));
    const sources = Object.fromEntries(
      files.map((f) => [relative(ROOT, f), readFileSync(f, 'utf8')]),
    );
    // The check itself refuses what 3.5 cannot parse, so a pass means something.
    sources['control/fstring.py'] = 'x = 1\nprint(f"{x}")\n';
    sources['control/walrus.py'] = 'if (n := 3):\n    pass\n';
    const verdicts = parseAs35(sources);
    expect(verdicts['control/fstring.py']).toMatch(/^line 2: .*3\.6/);
    expect(verdicts['control/walrus.py']).toMatch(/^line 1: .*3\.8/);
    delete verdicts['control/fstring.py'];
    delete verdicts['control/walrus.py'];
    const refused = Object.entries(verdicts).filter(([, why]) => why !== null);
    expect(refused).toEqual([]);
    expect(Object.keys(verdicts)).toHaveLength(files.length);
  }, 150_000);
});
