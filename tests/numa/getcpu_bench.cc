// Cost of the ways to learn the current CPU (and node), for docs/benchmarks.md.
// Not a test: timings on a shared 2-core box are noisy. Run:
//   bazel run --config=offline //tests/numa:getcpu_bench
//   GLIBC_TUNABLES=glibc.pthread.rseq=0 bazel-bin/tests/numa/getcpu_bench
// (the second shows sched_getcpu's vDSO path, with no rseq area).
#include <benchmark/benchmark.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "numa/current_cpu.h"
#include "numa/numa.h"

namespace tcmalloc {
namespace numa {
namespace {

// getcpu(2) as a plain system call: what rseq and the vDSO save.
int CpuFromSyscall() {
  unsigned cpu = 0;
  return syscall(SYS_getcpu, &cpu, nullptr, nullptr) == 0
             ? static_cast<int>(cpu)
             : -1;
}

void BM_RseqCpuId(benchmark::State& state) {
  if (CpuFromRseq() < 0) {
    state.SkipWithError("glibc has no registered rseq area");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(CpuFromRseq());
}
BENCHMARK(BM_RseqCpuId);

void BM_SchedGetcpu(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(sched_getcpu());
}
BENCHMARK(BM_SchedGetcpu);

void BM_SyscallGetcpu(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(CpuFromSyscall());
}
BENCHMARK(BM_SyscallGetcpu);

void BM_CurrentCpu(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(CurrentCpu());
}
BENCHMARK(BM_CurrentCpu);

const char* FakeFourNodes(const char* name) {
  return __builtin_strcmp(name, "TCMALLOC_NUMA_FAKE_NODES") == 0 ? "4"
                                                                 : nullptr;
}

// What the allocator pays: the out-of-line CurrentNode() with an active
// (fake, 4-node) layer, including the cpu -> node table load.
void BM_CurrentNodeActive(benchmark::State& state) {
  Init(FakeFourNodes);
  for (auto _ : state) benchmark::DoNotOptimize(CurrentNode());
}
BENCHMARK(BM_CurrentNodeActive);

}  // namespace
}  // namespace numa
}  // namespace tcmalloc

BENCHMARK_MAIN();
