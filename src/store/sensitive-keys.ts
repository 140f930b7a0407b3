// Which key names are sensitive: the values under them are withheld wherever the key is seen,
// a member of a value or a `KEY=value` pair in text. By whole words of the name (see the
// header of redact.ts), so `passed`, `tokens` or a bare `pass` are not.

// A word of a key name is sensitive when it ends in one of these (so `pgpassword`, `oauth`,
// `xsrftoken` count); adjacent words are also tried joined (`api_key` → `apikey`).
const SENSITIVE_WORD =
  /(?:passwords?|passwd|passphrase|secrets?|token|apikeys?|accesskeys?|privatekeys?|credentials?|cookies?|authorization|auth|sessionid|sessionkey)$/;
// Too common as the first part of another meaning (`pass_rate`, `session_count`) to match
// anywhere: sensitive only as the last word (`db_pass`, `session`).
const SENSITIVE_LAST_WORD = /^(?:pass|pwd|session)$/;
// Alone, these are a verb, a count or a shell command far more often than a credential
// (`does not pass: …`, `{"pass": 3}`, `pwd: /repo`): sensitive only after another word.
const NOT_ALONE = /^(?:pass|pwd)$/;
// Every sensitive word, and every two words joined, holds one of these: most keys need no more.
const SENSITIVE_PART = /pass|pwd|secret|token|key|credential|cookie|auth|session/;

function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/** Whether values under this key name are withheld, e.g. `apiKey`, `DB_PASSWORD`, `x-auth-token`. */
export function isSensitiveKey(key: string): boolean {
  if (!SENSITIVE_PART.test(key.toLowerCase().replace(/[^a-z0-9]+/g, ''))) return false;
  const words = keyWords(key);
  const last = words[words.length - 1];
  if (last !== undefined && SENSITIVE_LAST_WORD.test(last)) {
    return words.length > 1 || !NOT_ALONE.test(last);
  }
  return words.some(
    (word, i) => SENSITIVE_WORD.test(word) || SENSITIVE_WORD.test(word + (words[i + 1] ?? '')),
  );
}
