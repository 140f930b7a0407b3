import { describe, expect, it } from 'vitest';
import { patchHeaders } from '../../src/oracle/patch-headers.js';

const PATCH = `diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
index 0000000000000000000000000000000000000000..1111111111111111111111111111111111111111
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1,3 @@
+--- not a header
+diff --git a/inside b/inside
+def test_secret(): assert 1
diff --git a/tests/test_old.py b/tests/test_old.py
index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644
--- a/tests/test_old.py
+++ b/tests/test_old.py
@@ -1 +1,2 @@
 x = 1
+++ y
diff --git a/tests/a.py b/tests/b.py
similarity index 100%
rename from tests/a.py
rename to tests/b.py
`;

describe('the hidden test patch headers a runner gets', () => {
  it('keeps each file section header line and none of its hunks, nor their index lines', () => {
    expect(patchHeaders(Buffer.from(PATCH)).toString()).toBe(
      [
        'diff --git a/tests/test_new.py b/tests/test_new.py',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/tests/test_new.py',
        'diff --git a/tests/test_old.py b/tests/test_old.py',
        '--- a/tests/test_old.py',
        '+++ b/tests/test_old.py',
        'diff --git a/tests/a.py b/tests/b.py',
        'rename from tests/a.py',
        'rename to tests/b.py',
        '',
      ].join('\n'),
    );
  });

  it('gives the diff --git lines alone of a patch the parser refuses', () => {
    const broken =
      'diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1,5 +1,5 @@\n-x\n+secret\n';
    expect(patchHeaders(Buffer.from(broken)).toString()).toBe('diff --git a/t.py b/t.py\n');
  });

  it('gives nothing for an empty patch', () => {
    expect(patchHeaders(Buffer.alloc(0)).length).toBe(0);
  });
});
