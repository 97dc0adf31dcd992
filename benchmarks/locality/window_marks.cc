#include "benchmarks/locality/window_marks.h"

#include "tools/lab-plugin/window.h"

namespace locality {
namespace {

bool enabled = false;
bool open = false;

}  // namespace

void EnableWindows(bool on) { enabled = on; }
bool WindowsEnabled() { return enabled; }

void OpenWindow() {
  if (!enabled || open) return;
  open = true;
  LAB_WINDOW_OPEN();
}

void CloseWindow() {
  if (!open) return;
  open = false;
  LAB_WINDOW_CLOSE();
}

}  // namespace locality
