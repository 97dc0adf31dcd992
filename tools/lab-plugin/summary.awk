# One line per counting window of the lab's access plugin, for people: the
# accesses and LLC misses, and the share of each that touched another node's
# memory. Reads the plugin's output (tools/numa-vm --accesses FILE).
function share(m, n,   i, j, total, remote) {
  n = split(m, v, ":")
  k = int(sqrt(n) + 0.5)
  total = remote = 0
  for (i = 0; i < k; i++)
    for (j = 0; j < k; j++) {
      total += v[i * k + j + 1]
      if (i != j) remote += v[i * k + j + 1]
    }
  sum = total
  return total ? sprintf("%.2f%%", 100 * remote / total) : "-"
}
$1 == "window" {
  for (f = 3; f <= NF; f++) { split($f, kv, "="); x[kv[1]] = kv[2] }
  a = share(x["accesses"]); na = sum
  m = share(x["misses"]); nm = sum
  printf "numa-vm: window %d: %d accesses, %s remote; %d LLC misses, %s remote\n", $2, na, a, nm, m
}
$1 == "end" && $3 == "open=1" { print "numa-vm: a window was opened and never closed (not counted)" }
