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

// A range of the program's address space, told to the plugin from inside the
// guest (what the allocator's code is, where a thread's stack lies...), so
// that it can split the open window's counts by the code that made an access
// and the kind of memory it touched. No register can carry the values, so
// the addresses of the next accesses do: after the "LABr" marker, ten byte
// loads from one 4 KiB-aligned page, at offsets that are 12-bit chunks of
// the kind, of begin (4 chunks, low first), of end (4 chunks) and their xor.
// The plugin checks the page and the xor (a message another thread's
// accesses break is dropped and counted), and leaves the ten loads out of
// every count. Outside the lab the marker is a NOP and the loads are reads.
#define LAB_WINDOW_RANGE_DISP 0x7242414c  // "LABr"

// The kinds. Memory the program reports nothing about counts as heap:
// anonymous memory the allocator took from the kernel, its handed-out
// blocks and its own metadata alike.
enum lab_range_kind {
  LAB_RANGE_ALLOC_CODE = 1,  // the allocator's instructions
  LAB_RANGE_STACK = 2,       // a thread's stack
  LAB_RANGE_TLS = 3,         // a thread's descriptor and static TLS
  LAB_RANGE_STATIC = 4,      // writable data of the program and libraries
  LAB_RANGE_READONLY = 5,    // code, read-only data, vDSO
  // Not a range: begin is the guest kernel's page-fault entry
  // (asm_exc_page_fault in /proc/kallsyms, low 48 bits), which the plugin
  // counts per vCPU as the window's page faults. lab-window sends it.
  LAB_RANGE_FAULT_ENTRY = 6,
};

#define LAB_WINDOW_STRING2(x) #x
#define LAB_WINDOW_STRING(x) LAB_WINDOW_STRING2(x)
#define LAB_RANGE_CHUNK(v, shift) (((v) >> (shift)) & 0xfff)

// lab_window_range(page, kind, begin, end): page is any 4 KiB-aligned
// readable page of the caller's.
static inline void lab_window_range(const volatile unsigned char* page,
                                    unsigned long kind, unsigned long begin,
                                    unsigned long end) {
  const unsigned long c[9] = {
      kind & 0xfff,           LAB_RANGE_CHUNK(begin, 0),
      LAB_RANGE_CHUNK(begin, 12), LAB_RANGE_CHUNK(begin, 24),
      LAB_RANGE_CHUNK(begin, 36), LAB_RANGE_CHUNK(end, 0),
      LAB_RANGE_CHUNK(end, 12),   LAB_RANGE_CHUNK(end, 24),
      LAB_RANGE_CHUNK(end, 36)};
  const unsigned long x =
      c[0] ^ c[1] ^ c[2] ^ c[3] ^ c[4] ^ c[5] ^ c[6] ^ c[7] ^ c[8];
  // One asm block with the offsets in registers: no spill, no other access
  // of this thread between the marker and the ten loads.
  __asm__ volatile(
      ".byte 0x0f, 0x1f, 0x84, 0x00\n\t"
      ".long " LAB_WINDOW_STRING(LAB_WINDOW_RANGE_DISP) "\n\t"
      "movzbl (%[p],%[c0]), %%eax\n\t"
      "movzbl (%[p],%[c1]), %%eax\n\t"
      "movzbl (%[p],%[c2]), %%eax\n\t"
      "movzbl (%[p],%[c3]), %%eax\n\t"
      "movzbl (%[p],%[c4]), %%eax\n\t"
      "movzbl (%[p],%[c5]), %%eax\n\t"
      "movzbl (%[p],%[c6]), %%eax\n\t"
      "movzbl (%[p],%[c7]), %%eax\n\t"
      "movzbl (%[p],%[c8]), %%eax\n\t"
      "movzbl (%[p],%[x]), %%eax\n\t"
      :
      : [p] "r"(page), [c0] "r"(c[0]), [c1] "r"(c[1]), [c2] "r"(c[2]),
        [c3] "r"(c[3]), [c4] "r"(c[4]), [c5] "r"(c[5]), [c6] "r"(c[6]),
        [c7] "r"(c[7]), [c8] "r"(c[8]), [x] "r"(x)
      : "rax", "memory");
}

#endif  // TOOLS_LAB_PLUGIN_WINDOW_H_
