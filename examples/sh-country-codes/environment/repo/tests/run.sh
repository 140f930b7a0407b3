#!/bin/sh
# Runs every test_* function of every tests/test_*.sh, each in its own `sh -e`.
# Usage, from the repository root: sh tests/run.sh
failed=0
for file in tests/test_*.sh; do
  tests=$(sed -n 's/^\(test_[A-Za-z0-9_]*\)().*/\1/p' "$file")
  for fn in $tests; do
    if sh -ec '. "./$1"; "$2"' sh "$file" "$fn" </dev/null; then
      echo "ok $file::$fn"
    else
      echo "not ok $file::$fn"
      failed=1
    fi
  done
done
exit "$failed"
