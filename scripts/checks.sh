#!/usr/bin/env bash
# npm test's first step: the type check and the lint at once (each mostly one core, and the
# machine that runs them has two), failing when either fails, each printing its own errors.
set -uo pipefail
npm run -s typecheck &
typecheck=$!
npm run -s lint
lint=$?
wait "$typecheck"
types=$?
exit $((lint || types))
