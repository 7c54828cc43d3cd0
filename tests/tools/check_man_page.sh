#!/usr/bin/env bash
# ctest man_page: help2man makes the manual page from `tcsolve --help` and `--version`
# (docs/man/make_man_page.cmake, as the build does), and the page holds what a reader looks for:
# the NAME line, every subcommand that `tcsolve --help` lists (in the SYNOPSIS, with its
# synopsis, and in the subcommand list), the exit status; `man -l` renders it without a warning
# where man is installed (else the roff source is checked). The page the build made
# (BUILT_PAGE) must exist too. Skips (77) without help2man.
#   tests/tools/check_man_page.sh TCSOLVE HELP2MAN MAN_SOURCE_DIR CMAKE WORK_DIR BUILT_PAGE
set -uo pipefail
tcsolve=${1:?TCSOLVE} help2man=${2:-} man_dir=${3:?MAN_SOURCE_DIR} cmake=${4:?CMAKE} work=${5:?WORK_DIR}
built=${6:?BUILT_PAGE}
[[ -n $help2man && -x $help2man ]] || {
  echo "man_page: help2man was not found when the build was configured (Debian: apt-get install help2man;"
  echo "scripts/bootstrap installs it): skipped"
  exit 77
}
fail() { echo "man_page: FAILED: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
page=$work/tcsolve.1
"$cmake" -DTCSOLVE="$tcsolve" -DHELP2MAN="$help2man" -DINCLUDE="$man_dir/tcsolve.h2m" -DWORK="$work" \
  -DOUTPUT="$page" -P "$man_dir/make_man_page.cmake" || fail "make_man_page.cmake failed"
[[ -s $page ]] || fail "no page written"
[[ -s $built ]] || fail "the build made no $built (target tcsolve_man)"

# the text a reader sees: man's rendering, or the roff source with its escapes undone
if command -v man >/dev/null; then
  text=$(MANWIDTH=200 man --warnings -l "$page" 2>"$work/warnings" | sed -e 's/.\x08//g')
  [[ ! -s $work/warnings ]] || fail "man -l warns: $(cat "$work/warnings")"
  how="man -l"
else
  text=$(sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\f[BIRP]//g' -e 's/\\[,/]//g' "$page")
  how="the roff source (man is not installed)"
fi
[[ -n $text ]] || fail "the page renders empty"
grep -q "^NAME" <<<"$text" || grep -q '^\.SH NAME' <<<"$text" || fail "no NAME section"
grep -q "tcsolve.*FP32-accurate GEMM on tensor cores" <<<"$text" || fail "no NAME line"
grep -q "EXIT STATUS" <<<"$text" || fail "no EXIT STATUS section"
subcommands=$("$tcsolve" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NF > 1 {print $1}')
count=$(wc -w <<<"$subcommands")
((count >= 9)) || fail "tcsolve --help lists $count subcommands"
for name in $subcommands; do
  grep -Eq "tcsolve $name +[[(-]" <<<"$text" || fail "no synopsis of '$name'"
  grep -Eq "^ *$name( |$)" <<<"$text" || fail "'$name' is not in the subcommand list"
done
grep -q "tcsolve --version" <<<"$text" || fail "no synopsis of --version"
version=$("$tcsolve" --version | head -1)
grep -qF "${version%% (*}" "$page" || fail "the page does not name the version '$version'"
echo "man_page: $page from help2man, checked with $how: NAME, EXIT STATUS, --version and all $count subcommands"
