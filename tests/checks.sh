# PASS/FAIL bookkeeping for the script test suites. Source it after tools/lib.sh.
#   check NAME CMD...     run CMD; count and print "PASS NAME" or "FAIL NAME"
#   expect_fail CMD...    a control: succeeds when CMD fails (the check can fail)
#   finish                print "N passed, M failed" and exit non-zero on any failure
#   section OUT TAG       the lines of OUT tagged "TAG: ", without the tag (the lab
#                         suites' guest output)
passed=0
failed=0

check() {
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "PASS $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
  fi
}

expect_fail() { ! "$@"; }

# Always status 0: in `section ... | grep -q` under pipefail, grep may stop reading
# before sed has written everything, and sed's SIGPIPE must not fail the check.
section() { sed -n "s/^$2: //p" <<<"$1" || true; }

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
