# shellcheck shell=bash
# Room on every node for the lab's placement checks (issue 31, item 6). Source it after
# tools/lib.sh and tests/checks.sh. A placement check must not fail because the guest
# was too small: a node the kernel ran short spills first-touch pages to other nodes
# (its numa_foreign counter grows, another node's numa_miss), which reads like a
# placement failure but is not one.
#
#   lab_guest OUTVAR FREE ARGS...
#       tools/numa-vm -q --node-free FREE ARGS (FREE like 256M: free on every node when
#       the command starts, on top of what the guest itself holds there), output in
#       OUTVAR. When a watched run (below) found a node short, says so in one line and
#       boots the guest once more with twice FREE on every node.
#   $NODE_WATCH
#       guest shell code to put in the guest script first: it defines
#       `watched TAG CMD...`, which runs CMD (a shell function too) as it is, then
#       prints one "numa-vm-numastat: TAG ..." line per node whose numa_foreign or
#       numa_miss grew while it ran, and "numa-vm-numastat: TAG done"
#       (tools/numa-vm.d/numastat).
#   ran_short OUT TAG
#       "node6 (numa_foreign +1834)" for each node the kernel ran short during TAG.
#   placement_check NAME OUT TAG CMD...
#       `check NAME CMD...`, unless the kernel ran a node short during TAG: then it
#       fails as "NAME: not judged: node6 ran short (...)", which is the guest's
#       size, not placement.
#   (Which NUMA balancing the guest ran with, tools/numa-vm says on stderr after each
#   multi-node run.)

# shellcheck disable=SC2016,SC2034  # guest code, expanded in the guest; used by the suites
NODE_WATCH='watched() {
  _wt=$1; shift
  numa-vm-numastat snap "/tmp/.watched.$_wt"
  "$@"; _ws=$?
  numa-vm-numastat since "/tmp/.watched.$_wt" "$_wt"
  return $_ws
}
'

ran_short() {
  sed -n "s/^numa-vm-numastat: $2 \(node[0-9]*\) numa_foreign +\([1-9][0-9]*\) .*/\1 (numa_foreign +\2)/p" <<<"$1" |
    paste -sd' ' -
}

# Every watched tag of OUT that ran a node short, as "TAG: node6 (...)" lines.
short_runs() {
  local tag
  for tag in $(sed -n 's/^numa-vm-numastat: \([^ ]*\) done$/\1/p' <<<"$1" | sort -u); do
    local s
    s=$(ran_short "$1" "$tag")
    [ -z "$s" ] || echo "$tag: $s"
  done
}

lab_guest() {
  local -n lab_guest_out=$1
  local free=$2 rc=0 short mib
  shift 2
  lab_guest_out=$("$REPO_ROOT/tools/numa-vm" -q --node-free "$free" "$@") || rc=$?
  short=$(short_runs "$lab_guest_out")
  [ -n "$short" ] || return "$rc"
  mib=$((${free%[MG]} * 2))
  [[ $free == *G ]] && mib=$((mib * 1024))
  note "the kernel ran a node short, not a placement result ($(paste -sd';' <<<"$short" | sed 's/;/; /g')): booting the guest again with ${mib}M free per node"
  rc=0
  lab_guest_out=$("$REPO_ROOT/tools/numa-vm" -q --node-free "${mib}M" "$@") || rc=$?
  return "$rc"
}

placement_check() {
  local name=$1 out=$2 tag=$3 short
  shift 3
  short=$(ran_short "$out" "$tag")
  if [ -n "$short" ]; then
    check "$name: not judged: $short ran short during '$tag' (the guest's size, not placement)" false
  else
    check "$name" "$@"
  fi
}

