#include "benchmarks/locality/page_log.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <tuple>

#include "benchmarks/locality/page_query.h"

namespace locality {
namespace {

constexpr size_t kPageSize = 4096;
constexpr size_t kQueryBatch = 512;

// Storage outside the allocator under test, so the probe's bookkeeping neither
// uses nor disturbs the heap it measures.
Observation* Grow(Observation* old, size_t old_count, size_t new_count) {
  void* p;
  if (old == nullptr) {
    p = mmap(nullptr, new_count * sizeof(Observation), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  } else {
    p = mremap(old, old_count * sizeof(Observation),
               new_count * sizeof(Observation), MREMAP_MAYMOVE);
  }
  if (p == MAP_FAILED) {
    std::perror("locality_probe: mmap for the page log");
    std::exit(2);
  }
  return static_cast<Observation*>(p);
}

int g_explain_pages = 0;

// The allocator's owner of `p`, or -2 when it does not say.
int OwnerOf(uintptr_t p) {
  using NodeOf = int (*)(const void*);
  static const NodeOf node_of =
      reinterpret_cast<NodeOf>(dlsym(RTLD_DEFAULT, "tc_numa_node_of"));
  return node_of ? node_of(reinterpret_cast<const void*>(p)) : -2;
}

void Explain(const Observation* first, const Observation* last) {
  std::fprintf(stderr,
               "locality_probe: not local: %s page %#lx written on node %d "
               "owner %d seen on",
               first->size_class == kSmall ? "small" : "page",
               static_cast<unsigned long>(first->page), first->expected,
               OwnerOf(first->page));
  for (const Observation* o = first; o != last; ++o) {
    std::fprintf(stderr, " %d", o->actual);
  }
  std::fputc('\n', stderr);
}

}  // namespace

PageLog::~PageLog() {
  if (data_ != nullptr) munmap(data_, capacity_ * sizeof(Observation));
}

void PageLog::Append(const Observation& o) {
  if (size_ == capacity_) {
    const size_t next = capacity_ == 0 ? 1 << 16 : capacity_ * 2;
    data_ = Grow(data_, capacity_, next);
    capacity_ = next;
  }
  data_[size_++] = o;
}

void PageLog::Record(const void* block, size_t bytes, int node) {
  if (bytes == 0) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(block) & ~(kPageSize - 1);
  const uintptr_t last =
      (reinterpret_cast<uintptr_t>(block) + bytes - 1) & ~(kPageSize - 1);
  const uint8_t size_class = ClassOf(bytes);
  void* pages[kQueryBatch];
  int status[kQueryBatch];
  for (uintptr_t start = first; start <= last;
       start += kQueryBatch * kPageSize) {
    size_t n = 0;
    for (uintptr_t p = start; p <= last && n < kQueryBatch; p += kPageSize) {
      pages[n++] = reinterpret_cast<void*>(p);
    }
    // Each status is the page's node or a negative errno (-ENOENT for a page
    // never written).
    if (!QueryPageNodes(n, pages, status)) {
      std::perror("locality_probe: move_pages (and /proc/self/pagemap)");
      std::exit(2);
    }
    for (size_t i = 0; i < n; ++i) {
      Append({reinterpret_cast<uintptr_t>(pages[i]), static_cast<int16_t>(node),
              static_cast<int16_t>(status[i]), size_class});
    }
  }
}

void ExplainPages(int pages) { g_explain_pages = pages; }
int ExplainedPages() { return g_explain_pages; }

Summary Summarize(const std::vector<const PageLog*>& logs) {
  size_t total = 0;
  for (const PageLog* log : logs) total += log->end() - log->begin();
  Summary summary;
  if (total == 0) return summary;
  Observation* all = Grow(nullptr, 0, total);
  size_t n = 0;
  for (const PageLog* log : logs) {
    n = std::copy(log->begin(), log->end(), all + n) - all;
  }
  auto key = [](const Observation& o) {
    return std::make_tuple(o.size_class, o.page, o.expected);
  };
  std::sort(all, all + n, [&](const Observation& a, const Observation& b) {
    return key(a) < key(b);
  });
  int explained = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    bool local = true, unknown = false;
    for (; j < n && key(all[j]) == key(all[i]); ++j) {
      if (all[j].actual < 0) unknown = true;
      if (all[j].actual != all[j].expected) local = false;
    }
    if (!local && explained < g_explain_pages) {
      Explain(all + i, all + j);
      ++explained;
    }
    for (Tally* t : {&summary.by_class[all[i].size_class], &summary.all}) {
      ++t->pages;
      t->local += local;
      t->unknown += unknown;
    }
    i = j;
  }
  munmap(all, total * sizeof(Observation));
  return summary;
}

}  // namespace locality
