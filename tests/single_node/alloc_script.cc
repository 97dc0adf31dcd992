// A fixed allocation sequence for comparing two allocators byte for byte:
// the same calls, then the allocator's own GetStats text and properties.
//
//   alloc_script stats [--big-mib M]
//                                prints GetStats and generic properties; with
//                                --big-mib, after one written M MiB block
//   alloc_script churn N [--extra-syscall]
//                                N page-level + small malloc/free pairs; the
//                                flag adds one syscall per pair, so the
//                                syscall-count check can be shown to fail.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// The allocator under test arrives by LD_PRELOAD, so its extension API is
// looked up at run time (the C entry points of malloc_extension_c.h).
template <typename Fn>
Fn Lookup(const char* name) {
  void* fn = dlsym(RTLD_DEFAULT, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "alloc_script: %s not found: preload a tcmalloc\n",
                 name);
    std::exit(2);
  }
  return reinterpret_cast<Fn>(fn);
}

void ReleaseFreeMemory() {
  Lookup<void (*)()>("MallocExtension_ReleaseFreeMemory")();
}

void RunFixedSequence() {
  std::vector<void*> blocks;
  for (int i = 0; i < 2000; ++i) {
    blocks.push_back(malloc(16 + (i * 37) % 4000));
  }
  for (int i = 0; i < 40; ++i) {
    blocks.push_back(malloc((i + 1) * 100000));  // page-level spans
  }
  for (size_t i = 0; i < blocks.size(); i += 2) free(blocks[i]);
  ReleaseFreeMemory();
  for (size_t i = 1; i < blocks.size(); i += 2) free(blocks[i]);
}

int PrintStats(long big_mib) {
  if (big_mib > 0) {
    const size_t bytes = static_cast<size_t>(big_mib) << 20;
    char* big = static_cast<char*>(malloc(bytes));
    if (big == nullptr) return 1;
    for (size_t i = 0; i < bytes; i += 4096) big[i] = 1;
    free(big);
  }
  RunFixedSequence();
  static char buffer[1 << 20];
  Lookup<void (*)(char*, int)>("MallocExtension_GetStats")(buffer,
                                                           sizeof(buffer));
  std::fputs(buffer, stdout);
  auto get_property = Lookup<int (*)(const char*, size_t*)>(
      "MallocExtension_GetNumericProperty");
  for (const char* name :
       {"generic.current_allocated_bytes", "generic.heap_size",
        "tcmalloc.pageheap_free_bytes", "tcmalloc.pageheap_unmapped_bytes"}) {
    size_t value = 0;
    get_property(name, &value);
    std::printf("%s = %zu\n", name, value);
  }
  return 0;
}

int Churn(long pairs, bool extra_syscall) {
  for (long i = 0; i < pairs; ++i) {
    void* big = malloc(1 << 20);
    void* small = malloc(64 + i % 512);
    std::memset(big, 1, 64);
    std::memset(small, 1, 64);
    free(small);
    free(big);
    if (extra_syscall) syscall(SYS_getppid);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "stats") == 0) {
    const bool big = argc >= 4 && std::strcmp(argv[2], "--big-mib") == 0;
    return PrintStats(big ? std::atol(argv[3]) : 0);
  }
  if (argc >= 3 && std::strcmp(argv[1], "churn") == 0) {
    const bool extra = argc >= 4 && std::strcmp(argv[3], "--extra-syscall") == 0;
    return Churn(std::atol(argv[2]), extra);
  }
  std::fprintf(stderr,
               "usage: %s stats [--big-mib M] | churn N [--extra-syscall]\n",
               argv[0]);
  return 2;
}
