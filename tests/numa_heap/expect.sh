#!/bin/bash
# expect.sh STATUS PATTERN CMD...: passes when CMD exits with STATUS and prints
# a line matching the extended regex PATTERN (used by tests/numa_heap/BUILD).
want=$1 pattern=$2
shift 2
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
[ "$status" = "$want" ] || { echo "expect.sh: exit status $status, wanted $want"; exit 1; }
grep -qE "$pattern" <<<"$out" || { echo "expect.sh: no line matches '$pattern'"; exit 1; }
