// Our own declarations of the part of QEMU's TCG plugin API (API version 1,
// QEMU 6.0-8.1, Debian 12's 7.2) that numa_accesses.c uses. Debian ships no
// qemu-plugin.h, so these are written from QEMU's documented API
// (docs/devel/tcg-plugins.rst and the API reference): only the types, the
// enumerations' values and the functions' signatures, which is what the ABI
// fixes. QEMU resolves these symbols from its own executable when it loads the
// plugin; tools/lab-plugin/build checks that the QEMU it finds exports them.
#ifndef TOOLS_LAB_PLUGIN_QEMU_PLUGIN_API_H_
#define TOOLS_LAB_PLUGIN_QEMU_PLUGIN_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The two symbols every plugin exports: QEMU refuses a plugin whose version
// lies outside the range it supports.
#define LAB_PLUGIN_EXPORT __attribute__((visibility("default")))
#define LAB_PLUGIN_API_VERSION 1

typedef uint64_t qemu_plugin_id_t;

// What QEMU tells a plugin about the machine when it installs it.
typedef struct {
  const char* target_name;
  struct {
    int min;
    int cur;
  } version;
  bool system_emulation;
  union {
    struct {
      int smp_vcpus;
      int max_vcpus;
    } system;
  };
} qemu_info_t;

// Opaque handles, valid only during the callback that received them.
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
typedef uint32_t qemu_plugin_meminfo_t;

enum qemu_plugin_cb_flags {
  QEMU_PLUGIN_CB_NO_REGS,
  QEMU_PLUGIN_CB_R_REGS,
  QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_mem_rw {
  QEMU_PLUGIN_MEM_R = 1,
  QEMU_PLUGIN_MEM_W,
  QEMU_PLUGIN_MEM_RW,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
                                            void* userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index,
                                          qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void* userdata);

// Translation: called once per translated block, before it first runs.
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(
    const struct qemu_plugin_tb* tb, size_t idx);
const void* qemu_plugin_insn_data(const struct qemu_plugin_insn* insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn* insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn* insn);

// Execution: callbacks attached to one instruction at translation time.
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn* insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags,
                                            void* userdata);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb* tb,
                                          qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags,
                                          void* userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn* insn,
                                      qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags,
                                      enum qemu_plugin_mem_rw rw,
                                      void* userdata);

// The one inline operation of API version 1: add an immediate to a 64-bit
// counter each time a block runs, without a call into the plugin.
enum qemu_plugin_op {
  QEMU_PLUGIN_INLINE_ADD_U64,
};
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb,
                                              enum qemu_plugin_op op, void* ptr,
                                              uint64_t imm);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb* tb);

// Queries on one memory access.
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
struct qemu_plugin_hwaddr* qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info,
                                                  uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr* haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr* haddr);

// The end of the run (the guest powered off and QEMU is exiting).
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    qemu_plugin_udata_cb_t cb, void* userdata);

#endif  // TOOLS_LAB_PLUGIN_QEMU_PLUGIN_API_H_
