// Sized delete when the size alone cannot say where an object goes back
// (SizedFreeNeedsOwner; docs/design.md, "Sized delete"): an object of the
// thread's own node goes onto its own list with the class the size gives,
// anything else takes the unsized path. Included by tcmalloc.cc alone, so
// that FreeSized inlines into tc_free_sized.
#ifndef NUMA_TCMALLOC_NUMA_SIZED_DELETE_H_
#define NUMA_TCMALLOC_NUMA_SIZED_DELETE_H_

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "gperftools/tcmalloc.h"
#include "numa/numa.h"
#include "numa/small_objects.h"
#include "numa/thread_cache_nodes.h"
#include "static_vars.h"
#include "thread_cache.h"
#include "thread_cache_ptr.h"

namespace tcmalloc {
namespace numa {

// Anything but the thread's own node's object: the unsized path, after the
// cache learned how far its node's region has grown.
ATTRIBUTE_NOINLINE inline void FreeSizedElsewhere(void* ptr) {
  if (ThreadCache* cache = ThreadCachePtr::GetIfPresent()) {
    ThreadCacheNodes::RefreshLocalRange(cache);
  }
  tc_free(ptr);
}

// `ptr`, of `size` bytes, or null. A sampled allocation is page-aligned and
// never small: vanilla does not trust the size for those, nor does this.
ALWAYS_INLINE void FreeSized(void* ptr, size_t size) {
  ThreadCache* cache = ThreadCachePtr::GetIfPresent();
  uint32_t cl;
  if (PREDICT_TRUE(cache != nullptr) &&
      PREDICT_TRUE(ThreadCacheNodes::IsLocal(cache, ptr)) &&
#ifndef NO_TCMALLOC_SAMPLES
      (reinterpret_cast<uintptr_t>(ptr) & (kPageSize - 1)) != 0 &&
#endif
      Static::sizemap()->GetSizeClass(size, &cl)) {
    ThreadCacheNodes::DeallocateLocal(cache, ptr, cl);
    return;
  }
  FreeSizedElsewhere(ptr);
}

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_SIZED_DELETE_H_
