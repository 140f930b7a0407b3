# shellcheck shell=sh
# Helpers for the shell tests. A test file sources this; each test is a function test_*,
# run from the repository root in `sh -e` (tests/run.sh runs them all).

fail() {
  printf 'FAIL: %s\n' "$*" >&2
  return 1
}

# assert_eq ACTUAL EXPECTED
assert_eq() {
  [ "$1" = "$2" ] || fail "expected [$2], got [$1]"
}
