// The markers that open and close a counting window of the lab's access
// plugin (numa_accesses.c). QEMU 7.2's plugin API cannot read registers, so a
// program cannot pass the plugin a value; it can only execute an instruction
// whose bytes the plugin recognises when it translates the code. Each marker
// is a multi-byte NOP (`nopl disp32(%rax,%rax,1)`, bytes 0f 1f 84 00 + disp32)
// with a displacement no compiler emits (padding NOPs carry 0): harmless on
// any x86-64 machine, with or without the plugin.
//
// Use: LAB_WINDOW_OPEN(); ...code to measure...; LAB_WINDOW_CLOSE();
// Windows do not nest: the plugin counts from an open to the next close, in
// every process and thread of the guest (keep the guest otherwise idle).
#ifndef TOOLS_LAB_PLUGIN_WINDOW_H_
#define TOOLS_LAB_PLUGIN_WINDOW_H_

// The displacements, little-endian in the instruction: "LABo" and "LABc".
#define LAB_WINDOW_OPEN_DISP 0x6f42414c
#define LAB_WINDOW_CLOSE_DISP 0x6342414c

// The marker instruction; LAB_WINDOW_MARK expands its argument first, so that
// the displacement's value, not its name, lands in the instruction. The
// memory clobber keeps the compiler from moving measured accesses across it.
#define LAB_WINDOW_ASM(disp)             \
  __asm__ volatile(                      \
      ".byte 0x0f, 0x1f, 0x84, 0x00\n\t" \
      ".long " #disp ::                  \
          : "memory")
#define LAB_WINDOW_MARK(disp) LAB_WINDOW_ASM(disp)

#define LAB_WINDOW_OPEN() LAB_WINDOW_MARK(LAB_WINDOW_OPEN_DISP)
#define LAB_WINDOW_CLOSE() LAB_WINDOW_MARK(LAB_WINDOW_CLOSE_DISP)

#endif  // TOOLS_LAB_PLUGIN_WINDOW_H_
