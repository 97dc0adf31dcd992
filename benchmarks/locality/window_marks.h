// Counting windows of the lab's access plugin (tools/numa-vm --accesses,
// tools/lab-plugin/window.h) around each workload's own work, with
// --windows: opened in the workload's process before its threads start,
// closed when they are done and before the probe reads its page logs, so the
// counts are the workload's and the allocator's, not the probe's bookkeeping.
#ifndef BENCHMARKS_LOCALITY_WINDOW_MARKS_H_
#define BENCHMARKS_LOCALITY_WINDOW_MARKS_H_

namespace locality {

// Off by default: an unexpected close would end a window someone else opened.
void EnableWindows(bool on);
bool WindowsEnabled();
// Both do nothing unless enabled; a close without an open does nothing.
void OpenWindow();
void CloseWindow();

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_WINDOW_MARKS_H_
