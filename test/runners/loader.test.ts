// core/loader.py: `python3 -c LOADER SCRIPT ARGS…` runs SCRIPT as `python3 SCRIPT ARGS…` would,
// and with PROCTOR_CODE_CACHE=UID:FOLDER shares the code UID's process compiled, taking it only
// from a folder and a file UID owns and nobody else can write. Run in the runners' test image
// as root, each step as the uid it names (setpriv), with the evaluator's output folder as a
// tmpfs anyone may write into, as in a grade.
import { describe, expect, it } from 'vitest';
import { codeLoader } from '../../src/runners/index.js';
import { fileArguments } from '../../src/sandbox/file-arguments.js';
import { execFileAsync, fixtureImage } from '../helpers/docker.js';

// What a script sees of how it was started.
const SCRIPT = String.raw`import json, os, sys
def probe():
    pass
print(json.dumps({
    "argv": sys.argv, "file": __file__, "name": __name__, "path0": sys.path[0],
    "names": sorted(n for n in globals() if n.startswith("__")),
    "code": probe.__code__.co_filename, "loader": type(__loader__).__name__,
    "main": sys.modules["__main__"].__dict__ is globals(), "isolated": sys.flags.isolated,
}))
raise SystemExit(3)
`;

// A module of the checkout that must never be imported by the loader or the script.
const HIJACK = 'print("the checkout\'s module was imported")\n';

/** Runs `script` (sh, as root) in the runners' image with /w holding the files; its stdout. */
async function inImage(
  script: string,
  files: ReadonlyArray<readonly [string, string]>,
): Promise<string> {
  const image = await fixtureImage('runners');
  const args = fileArguments(
    '/w',
    [['loader.py', codeLoader()] as const, ['s.py', SCRIPT] as const, ...files].map(
      ([name, text]): [string, Buffer] => [name, Buffer.from(text, 'utf8')],
    ),
  );
  const { stdout } = await execFileAsync('docker', [
    ...['run', '--rm', '--network', 'none', '--tmpfs', '/out:mode=1777', '--user', '0'],
    ...[
      image,
      'sh',
      '-c',
      `set -e\nmkdir -p /w\n${args.script}\n${script}`,
      'loader-test',
      ...args.args,
    ],
  ]);
  return stdout;
}

// `as UID CMD…`: CMD as that uid and gid, no supplementary group.
const AS = String.raw`as() { u=$1; shift; setpriv --reuid "$u" --regid "$u" --clear-groups "$@"; }
L=$(cat /w/loader.py)
chmod 755 /w && chmod 644 /w/*.py`;

describe("the Python runners' loader", { timeout: 300_000 }, () => {
  it('runs a script as python3 runs it, from a checkout with modules of the same names', async () => {
    const out = await inImage(
      String.raw`${AS}
mkdir /w/checkout && cd /w/checkout
for m in json zlib stat marshal os; do cp /w/hijack.py "$m.py"; done
for flags in "" -I; do
  python3 $flags /w/s.py a 'b c' || echo "exit $?"
  python3 $flags -c "$L" /w/s.py a 'b c' || echo "exit $?"
  PROCTOR_CODE_CACHE=0:/out/c python3 $flags -c "$L" /w/s.py a 'b c' || echo "exit $?"
done`,
      [['hijack.py', HIJACK]],
    );
    expect(out).not.toContain('imported');
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(12);
    // Three ways, twice (plain and -I): each pair of lines the script's output and its exit.
    for (const group of [lines.slice(0, 6), lines.slice(6)]) {
      expect(group[1]).toBe('exit 3');
      expect(group[2]).toBe(group[0]);
      expect(group[3]).toBe('exit 3');
      expect(group[4]).toBe(group[0]);
      expect(group[5]).toBe('exit 3');
    }
    const plain = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(plain).toMatchObject({
      argv: ['/w/s.py', 'a', 'b c'],
      file: '/w/s.py',
      name: '__main__',
      path0: '/w',
      code: '/w/s.py',
      loader: 'SourceFileLoader',
      main: true,
      isolated: 0,
    });
    const isolated = JSON.parse(lines[6]!) as Record<string, unknown>;
    expect(isolated['isolated']).toBe(1);
    expect(isolated['path0']).not.toBe('/w');
  });

  it('takes the code the cache uid compiled, under its own file name', async () => {
    const out = await inImage(
      String.raw`${AS}
cd /tmp
# The writer: the collector's uid compiles the script and leaves its code.
as 1000 env PROCTOR_CODE_CACHE=1000:/out/c python3 -c "$L" /w/s.py > /dev/null || true
stat -c '%u %a' /out/c /out/c/*
# The same uid swaps that code for other code: a reader that prints this line took it.
as 1000 python3 -c '
import glob, marshal
path = glob.glob("/out/c/*")[0]
code = compile("print(\"the cached code\", __file__, (lambda: 0).__code__.co_filename)", "/elsewhere", "exec")
open(path, "wb").write(marshal.dumps(code))'
cp /w/s.py /w/copy.py
as 1001 env PROCTOR_CODE_CACHE=1000:/out/c python3 -c "$L" /w/copy.py
as 1001 env PROCTOR_CODE_CACHE=1000:/out/c python3 -I -c "$L" /w/copy.py`,
      [],
    );
    const lines = out.trim().split('\n');
    expect(lines[0]).toBe('1000 755');
    expect(lines[1]).toBe('1000 644');
    expect(lines.slice(2)).toEqual([
      'the cached code /w/copy.py /w/copy.py',
      'the cached code /w/copy.py /w/copy.py',
    ]);
  });

  it("compiles the script itself wherever the cached code could be another uid's", async () => {
    const out = await inImage(
      String.raw`${AS}
cd /tmp
as 1000 env PROCTOR_CODE_CACHE=1000:/out/c python3 -c "$L" /w/s.py > /dev/null || true
as 1000 python3 -c '
import glob, marshal
path = glob.glob("/out/c/*")[0]
open(path, "wb").write(marshal.dumps(compile("print(\"cached\")", "x", "exec")))'
key=$(basename /out/c/*)
read_as() { as 1001 env PROCTOR_CODE_CACHE="$1" python3 -c "$L" /w/s.py | head -c 6; echo " $2"; }
read_as 1000:/out/c trusted
read_as 1002:/out/c "another uid named"
read_as "" "no cache"
read_as 1000 "no folder"
# The file is the task uid's.
cp -a /out/c /out/d && chown 1001 /out/d/$key
read_as 1000:/out/d "a file of the task uid"
# The file may be written by its group, or by anyone.
cp -a /out/c /out/e && chmod 664 /out/e/$key
read_as 1000:/out/e "a file its group can write"
cp -a /out/c /out/f && chmod 646 /out/f/$key
read_as 1000:/out/f "a file anyone can write"
# The folder is the task uid's, or anyone may write into it.
cp -a /out/c /out/g && chown 1001 /out/g
read_as 1000:/out/g "a folder of the task uid"
cp -a /out/c /out/h && chmod 777 /out/h
read_as 1000:/out/h "a folder anyone can write"
# A link: to the folder, or as the file.
ln -s /out/c /out/i
read_as 1000:/out/i "a link to the folder"
mkdir /out/j && chown 1000 /out/j && chmod 755 /out/j && ln -s /out/c/$key /out/j/$key
read_as 1000:/out/j "a link to the file"
# A second name of the file (a hard link the task uid could have made to it).
mkdir /out/k && chown 1000 /out/k && chmod 755 /out/k && ln /out/c/$key /out/k/$key
read_as 1000:/out/k "a file with two names"
# Bytes that are not code.
cp -a /out/c /out/l && printf 'not code' > /out/l/$key
read_as 1000:/out/l "bytes that are not code"
# Another source: its own key, never the code of another file.
printf 'print("another script")\n' > /w/other.py && chmod 644 /w/other.py
as 1001 env PROCTOR_CODE_CACHE=1000:/out/c python3 -c "$L" /w/other.py
# A reader never writes, not even into a folder that is not there yet.
as 1001 env PROCTOR_CODE_CACHE=1001:/out/m python3 -c "$L" /w/s.py > /dev/null || true
as 1001 env PROCTOR_CODE_CACHE=1000:/out/n python3 -c "$L" /w/s.py > /dev/null || true
ls /out`,
      [],
    );
    const lines = out.trim().split('\n');
    // The script's own output starts `{"argv`; the planted code's is `cached`.
    expect(lines.slice(0, 15)).toEqual([
      'cached trusted',
      '{"argv another uid named',
      '{"argv no cache',
      '{"argv no folder',
      '{"argv a file of the task uid',
      '{"argv a file its group can write',
      '{"argv a file anyone can write',
      '{"argv a folder of the task uid',
      '{"argv a folder anyone can write',
      '{"argv a link to the folder',
      '{"argv a link to the file',
      '{"argv a file with two names',
      '{"argv bytes that are not code',
      'another script',
      // The one writer here is uid 1001 into its own folder m, which it may; n stays absent.
      'c',
    ]);
    expect(lines.slice(15)).toEqual(['d', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm']);
  });
});
