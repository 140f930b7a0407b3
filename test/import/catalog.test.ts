// The environment catalog (environments/, src/import/catalog.ts): a row finds its own version's
// folder and no other; an unknown repository, version or a row without one is one line naming
// what the catalog has and what to pass; every committed SWE-bench row of a catalogued
// repository finds its environment (SWE-bench Multilingual's included, one folder a row), except
// the versions documented as prebuilt images only;
// and `proctor import swebench` without --environment imports a small generated repository
// through the catalog's psf/requests 2.3 environment, built for real, valid under baseline --gold.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_DIR, catalogEnvironment, catalogVersions } from '../../src/import/catalog.js';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { ROOT } from '../helpers/processes.js';
import { commit, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';
import { baseImage } from '../helpers/test-tools.js';

function catalog(folders: string[]): string {
  const root = tempDir('proctor-catalog-');
  for (const folder of folders) {
    mkdirSync(join(root, folder), { recursive: true });
    if (!folder.endsWith('/empty')) writeFileSync(join(root, folder, 'Dockerfile'), 'FROM x\n');
  }
  return root;
}

const instead =
  'pass --environment DIR (with DIR/acme__calc/<version>/Dockerfile) or --images swebench';

describe('the environment catalog', () => {
  it("takes the row's own version folder, and lists versions as numbers", () => {
    const dir = catalog([
      'acme__calc/1.10',
      'acme__calc/1.9',
      'acme__calc/2.0',
      'acme__calc/empty',
    ]);
    expect(catalogEnvironment(dir, { repo: 'acme/calc', version: '1.10' })).toEqual({
      context: join(dir, 'acme__calc', '1.10'),
    });
    expect(catalogVersions(dir, 'acme/calc')).toEqual(['1.9', '1.10', '2.0']);
  });

  it('names what the catalog has and what to pass for an unknown repository, version or none', () => {
    const dir = catalog(['acme__calc/1.9', 'acme__calc/2.0', 'acme__calc/empty']);
    const reasons = [
      catalogEnvironment(dir, { repo: 'acme/calc', version: '1.1' }),
      catalogEnvironment(dir, { repo: 'acme/calc', version: 'empty' }),
      catalogEnvironment(dir, { repo: 'acme/other', version: '1.0' }),
      catalogEnvironment(dir, { repo: 'acme/calc' }),
      catalogEnvironment(dir, { repo: 'acme/calc', version: '..' }),
    ].map((r) => ('reason' in r ? r.reason : r.context));
    expect(reasons).toEqual([
      `the environment catalog has no environment for acme/calc 1.1 (it has 1.9, 2.0): ${instead}`,
      `the environment catalog has no environment for acme/calc empty (it has 1.9, 2.0): ${instead}`,
      `the environment catalog has no environment for acme/other: ${instead.replaceAll('acme__calc', 'acme__other')}`,
      `the row has no version, which the environment catalog needs: ${instead}`,
      `the row has no version, which the environment catalog needs: ${instead}`,
    ]);
    for (const reason of reasons) expect(reason).not.toContain('\n');
  });

  it("gives every committed row of a catalogued repository its version's environment, but the prebuilt-only versions", () => {
    const rows = ['lite.jsonl', 'verified-django.jsonl', 'multilingual.jsonl'].flatMap((file) =>
      readFileSync(join(ROOT, 'datasets/swebench', file), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { repo: string; version: string }),
    );
    const missing = new Set<string>();
    for (const row of rows) {
      const found = catalogEnvironment(CATALOG_DIR, row);
      if ('reason' in found) missing.add(`${row.repo} ${row.version}`);
    }
    // Django's versions on Python 3.5, which neither Debian nor SWE-bench's pins for them
    // (python setup.py install) come near (environments/django__django/PROVENANCE.md).
    expect([...missing].sort()).toEqual(['django/django 1.11', 'django/django 2.2']);
    expect(rows.length).toBe(86 + 231 + 79);
  });

  it('holds a PROVENANCE.md per repository and a Dockerfile from a Debian base per version', () => {
    for (const repo of readdirSync(CATALOG_DIR).filter((n) => n.includes('__'))) {
      expect(readdirSync(join(CATALOG_DIR, repo))).toContain('PROVENANCE.md');
      for (const version of catalogVersions(CATALOG_DIR, repo.replace('__', '/'))) {
        const dockerfile = readFileSync(join(CATALOG_DIR, repo, version, 'Dockerfile'), 'utf8');
        expect(dockerfile, `${repo}/${version}`).toMatch(
          /^FROM debian:(bullseye|bookworm|trixie)-slim$/m,
        );
      }
    }
  });

  it("gives django 3.0, 3.1 and 3.2 rows their own folder on bullseye's Python 3.9, with SWE-bench's en_US.UTF-8 locale, and names what to pass for 2.2", () => {
    for (const version of ['3.0', '3.1', '3.2']) {
      expect(catalogEnvironment(CATALOG_DIR, { repo: 'django/django', version })).toEqual({
        context: join(CATALOG_DIR, 'django__django', version),
      });
      const dockerfile = readFileSync(
        join(CATALOG_DIR, 'django__django', version, 'Dockerfile'),
        'utf8',
      );
      expect(dockerfile, version).toMatch(/^FROM debian:bullseye-slim$/m);
      // SWE-bench's eval_commands for 3.x: locale-gen en_US.UTF-8, LANG and LANGUAGE.
      expect(dockerfile, version).toMatch(
        /sed -i '\/en_US\.UTF-8\/s\/\^# \/\/g' \/etc\/locale\.gen && locale-gen$/m,
      );
      expect(dockerfile, version).toMatch(/^ENV LANG=en_US\.UTF-8 LANGUAGE=en_US:en$/m);
      expect(readFileSync(join(CATALOG_DIR, 'django__django', version, 'install.sh'), 'utf8')).toBe(
        'python -m pip install -r tests/requirements/py3.txt && python -m pip install -e .\n',
      );
    }
    const older = catalogEnvironment(CATALOG_DIR, { repo: 'django/django', version: '2.2' });
    expect(older).toEqual({
      reason:
        'the environment catalog has no environment for django/django 2.2 (it has 3.0, 3.1, 3.2, 4.0, 4.1, 4.2, 5.0): pass --environment DIR (with DIR/django__django/<version>/Dockerfile) or --images swebench',
    });
  });

  it("downloads a Go, Rust or Maven row's modules at image build into a folder its image names, so a grade needs no network", () => {
    const offline: Record<string, [RegExp, RegExp]> = {
      'gin-gonic__gin': [/^ENV GOPATH=\/go .*GOTOOLCHAIN=local/m, /^go mod download && /],
      burntsushi__ripgrep: [/^ENV CARGO_HOME=\/cargo /m, /^cargo fetch --locked && /],
      sharkdp__bat: [/^ENV CARGO_HOME=\/cargo /m, /^cargo fetch --locked && /],
      // SWE-bench's build into /opt/m2, which a grade's offline Maven reads as the tail of a
      // local repository whose head is in the grade's own HOME; one real test class run at
      // install, so that Surefire's JUnit Platform provider is there for an offline `mvn test`.
      javaparser__javaparser: [
        /^ENV PATH=\/opt\/maven\/bin:\$PATH MAVEN_ARGS=-Dmaven\.repo\.local\.tail=\/opt\/m2$/m,
        / MAVEN_ARGS= mvn -B -Dmaven\.repo\.local=\/opt\/m2 clean install -pl javaparser-[a-z-]+-testing -DskipTests -am && .* -am test dependency:build-classpath -Dtest=\w+Test .*chmod -R a\+rX \/opt\/m2/,
      ],
    };
    for (const [repo, [env, install]] of Object.entries(offline)) {
      const versions = catalogVersions(CATALOG_DIR, repo.replace('__', '/'));
      expect(versions.length, repo).toBeGreaterThan(0);
      for (const version of versions) {
        const dir = join(CATALOG_DIR, repo, version);
        expect(readFileSync(join(dir, 'Dockerfile'), 'utf8'), `${repo}/${version}`).toMatch(env);
        expect(readFileSync(join(dir, 'install.sh'), 'utf8'), `${repo}/${version}`).toMatch(
          install,
        );
      }
    }
  });
});

const SETUP = `from setuptools import setup\n\nsetup(name="requests", version="2.3.0", packages=["requests"])\n`;
const INIT = `def get(url):\n    return url\n`;
const FIXED = `def get(url):\n    if not url:\n        raise ValueError("no url")\n    return url\n`;
const TESTS = `import requests\n\n\ndef test_get():\n    assert requests.get("x") == "x"\n`;
const NEW_TESTS = `${TESTS}\n\ndef test_empty():\n    import pytest\n\n    with pytest.raises(ValueError):\n        requests.get("")\n`;

const diff = (repo: string, a: string, b: string, path: string) =>
  execFileSync('git', ['diff', '--binary', '--full-index', a, b, '--', path], {
    cwd: repo,
    encoding: 'utf8',
  });

describe('import swebench through the catalog', { timeout: 900_000 }, () => {
  beforeAll(() => {
    baseImage('bullseye');
  }, 300_000);

  it("imports without --environment from the catalog's version folder, builds it, and skips an unknown one in one line", async () => {
    const root = tempDir('proctor-catalog-import-');
    // A small package laid out as requests 2.3 is (its tests in test_requests.py at the top),
    // imported under psf/requests so that the catalog's own 2.3 environment builds it.
    const repo = newRepo(join(root, 'repos', 'psf__requests'));
    const base = commit(
      repo,
      {
        'setup.py': SETUP,
        '.gitignore': 'build/\n*.egg-info/\n__pycache__/\n',
        'requests/__init__.py': INIT,
        'test_requests.py': TESTS,
      },
      'base',
    );
    const fix = commit(
      repo,
      { 'requests/__init__.py': FIXED, 'test_requests.py': NEW_TESTS },
      'fix',
    );
    const row = {
      instance_id: 'psf__requests-1',
      repo: 'psf/requests',
      base_commit: base,
      patch: diff(repo, base, fix, 'requests'),
      test_patch: diff(repo, base, fix, 'test_requests.py'),
      FAIL_TO_PASS: ['test_requests.py::test_empty'],
      PASS_TO_PASS: ['test_requests.py::test_get'],
      problem_statement: 'get("") returns ""; it should raise ValueError.',
      version: '2.3',
    };
    const rows = [row, { ...row, instance_id: 'psf__requests-2', version: '9.9' }];
    const rowsFile = join(root, 'rows.jsonl');
    writeFileSync(rowsFile, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const suite = join(root, 'suite');
    const imported = await proctor([
      ...['import', 'swebench', rowsFile, '--repos', join(root, 'repos'), '--out', suite],
    ]);
    expect(imported.code, imported.stdout + imported.stderr).toBe(1);
    const lines = imported.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^written\s+psf__requests-1 .*runner pytest .* environment \S+environments\/psf__requests\/2\.3$/,
    );
    expect(lines[1]).toBe(
      'skipped row 2 (psf__requests-2): the environment catalog has no environment for psf/requests 9.9 (it has 0.14, 2.3, 2.4, 2.7, 2.10): pass --environment DIR (with DIR/psf__requests/<version>/Dockerfile) or --images swebench',
    );
    const toml = readFileSync(join(suite, 'psf__requests-1', 'task.toml'), 'utf8');
    expect(toml).toContain('install = "python -m pip install ."');
    expect(readdirSync(join(suite, 'psf__requests-1', 'environment')).sort()).toEqual([
      'Dockerfile',
      'proctor-base.bundle',
    ]);

    const home = tempDir('proctor-home-');
    const baseline = await proctor(['--home', home, 'baseline', suite, '--gold', '--wait']);
    expect(baseline.code, baseline.stdout + baseline.stderr).toBe(0);
    expect(baseline.stdout).toMatch(/^psf__requests-1\s+valid\s+PASS/m);
    expect(await leftovers(home)).toEqual([]);
  });
});
