# shellcheck shell=sh source=tests/lib.sh
. ./tests/lib.sh

test_known_codes() {
  assert_eq "$(bin/country FR)" "France"
  assert_eq "$(bin/country de)" "Germany"
  assert_eq "$(bin/country JP US)" "$(printf 'Japan\nUnited States')"
}

test_unknown_code() {
  out=$(bin/country XX 2>&1) && fail "XX is not a country code"
  assert_eq "$out" "country: unknown code: XX"
  out=$(bin/country FRA 2>&1) && fail "FRA is alpha-3, not alpha-2"
  assert_eq "$out" "country: unknown code: FRA"
}

test_list() {
  count=$(bin/country --list | wc -l)
  [ "$count" -ge 240 ] || fail "only $count countries listed"
  assert_eq "$(bin/country --list | head -n 1)" "$(printf 'AD\tAndorra')"
}

test_data_file_format() {
  gzip -t data/countries.tsv.gz
  bad=$(gzip -dc data/countries.tsv.gz | grep -vc "$(printf '^[A-Z][A-Z]\t[^\t][^\t]*$')" || true)
  assert_eq "$bad" "0"
  codes=$(gzip -dc data/countries.tsv.gz | cut -f 1)
  assert_eq "$codes" "$(printf '%s\n' "$codes" | LC_ALL=C sort -u)"
}
