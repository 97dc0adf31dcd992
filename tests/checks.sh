# PASS/FAIL bookkeeping for the script test suites. Source it after tools/lib.sh.
#   check NAME CMD...     run CMD; count and print "PASS NAME" or "FAIL NAME"
#   expect_fail CMD...    a control: succeeds when CMD fails (the check can fail)
#   finish                print "N passed, M failed" and exit non-zero on any failure
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

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
