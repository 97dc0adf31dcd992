// The "tcmalloc.numa.*" properties and the NUMA block of GetStats
// (numa/introspection.h).
#include "numa/introspection.h"

#include <string.h>
#include <unistd.h>

#include "central_freelist.h"
#include "internal_logging.h"
#include "numa/counters.h"
#include "numa/mempolicy.h"
#include "numa/node_heaps.h"
#include "numa/numa.h"
#include "numa/parse.h"
#include "numa/region.h"
#include "numa/remote_free_log.h"
#include "numa/reuse_witness.h"
#include "numa/small_objects.h"
#include "page_heap.h"
#include "static_vars.h"

namespace tcmalloc {
namespace numa {
namespace {

constexpr double kMiB = 1048576.0;

// Parses "<digits>." at *p; advances past the dot. No strtol: it may touch
// locale state, and this runs inside malloc's introspection.
bool ParseNodeNumber(const char** p, int* node) {
  const char* s = *p;
  int value = 0;
  int digits = 0;
  while (*s >= '0' && *s <= '9' && digits < 3) {
    value = value * 10 + (*s - '0');
    ++s;
    ++digits;
  }
  if (digits == 0 || *s != '.' || value >= kMaxNodes) return false;
  *p = s + 1;
  *node = value;
  return true;
}

// Stats of node's heap; one that has not allocated yet reads as zero.
bool NodeStats(int node, PageHeap::Stats* stats) {
  if (node < 0 || node >= NumNodes()) return false;
  SpinLockHolder h(Static::pageheap_lock());
  if (!NodeHeaps::HeapStats(node, stats)) *stats = PageHeap::Stats();
  return true;
}

// Bytes of free objects in node's central lists and transfer-cache slots.
size_t CentralFreeBytes(int node) {
  if (node >= NodesWithCentralLists() || !NodeListsMade(node)) return 0;
  size_t bytes = 0;
  for (unsigned cl = 1; cl < Static::num_size_classes(); ++cl) {
    CentralFreeList& list = Static::central_cache()[NodeClass(node, cl)];
    bytes += static_cast<size_t>(list.length() + list.tc_length()) *
             Static::sizemap()->ByteSizeForClass(cl);
  }
  return bytes;
}

const PlacedMemoryReader* g_placed_reader;
uint64_t (*g_handed_over_reader)();  // SetHandedOverBytesReader

const PlacedMemoryReader* PlacedReader() {
  return __atomic_load_n(&g_placed_reader, __ATOMIC_ACQUIRE);
}

// A placed heap's stats; false if it has none (not used yet).
bool PlacedStats(int region, PageHeap::Stats* stats) {
  if (!PlacementStarted()) return false;
  SpinLockHolder h(Static::pageheap_lock());
  return NodeHeaps::HeapStats(region, stats);
}

// Bytes of placed region's free objects in its lists and caches.
size_t PlacedListBytes(int region) {
  const PlacedMemoryReader* r = PlacedReader();
  return r != nullptr ? r->free_bytes(region) : 0;
}

unsigned long long CountOf(Counter c) {
  return static_cast<unsigned long long>(CounterValue(c));
}

struct CounterName {
  const char* name;
  Counter counter;
};
constexpr CounterName kCounters[] = {
    {"remote_free_objects", Counter::kRemoteFreeObjects},
    {"thread_migrations", Counter::kThreadMigrations},
    {"migration_flushed_objects", Counter::kFlushedObjects},
    {"rerouted_objects", Counter::kReroutedObjects},
    {"idle_drained_objects", Counter::kIdleDrainedObjects},
    {"borrowed_objects", Counter::kBorrowedObjects},
    {"released_for_reuse", Counter::kReleasedForReuse},
    {"witnessed_returns", Counter::kWitnessedReturns},
    {"moved_spans_checked", Counter::kMovedSpansChecked},
    {"moved_spans_released", Counter::kMovedSpansReleased},
    {"moved_spans_kept", Counter::kMovedSpansKept},
    {"inbox_full_objects", Counter::kInboxFullObjects},
    {"refills_moved", Counter::kRefillsMoved},
    {"unstrandings", Counter::kUnstrandings},
};

// tcmalloc.numa.<name>: one figure each.
struct ScalarProperty {
  const char* name;
  size_t (*read)();
};
constexpr ScalarProperty kScalars[] = {
    {"active", [] { return size_t{Active()}; }},
    {"num_nodes", [] { return size_t(NumNodes()); }},
    {"mbind_calls", [] { return size_t(MbindCalls()); }},
    {"mbind_failures", [] { return size_t(MbindFailures()); }},
    {"metadata_binds", [] { return size_t(MetadataBinds()); }},
    {"metadata_bind_failures", [] { return size_t(MetadataBindFailures()); }},
    {"cpu_nodes", [] { return size_t(NodesWithCentralLists()); }},
    // The name before CPU nodes had one; kept for old scripts.
    {"list_nodes", [] { return size_t(NodesWithCentralLists()); }},
    // 0 no page of ours moves, 1 cooperating, 2 not checked (ignored, or
    // move_pages refused): the values of Cooperation.
    {"kernel_balancing", [] { return size_t(BalancingCooperation()); }},
    {"region_failures", [] { return size_t(RegionFailures()); }},
};

// tcmalloc.numa.refused_<call>: the errno the kernel refused it with.
struct RefusalProperty {
  const char* name;
  int Refusals::*call;
};
constexpr RefusalProperty kRefusals[] = {
    {"refused_get_mempolicy", &Refusals::get_mempolicy},
    {"refused_mbind", &Refusals::mbind},
    {"refused_set_mempolicy_home_node", &Refusals::home_node},
    {"refused_move_pages", &Refusals::move_pages},
};

// One line per call the kernel refused, and what the layer gave up for it;
// nothing when none was.
void DumpRefusals(TCMalloc_Printer* out) {
  const Refusals r = RefusedCalls();
  if (r.get_mempolicy != 0) {
    const char* mems = MemsSource();
    out->printf(
        "NUMA refused get_mempolicy (%s): memory nodes read from %s; task "
        "policy taken as the default\n",
        RefusalName(r.get_mempolicy), mems != nullptr ? mems : "files");
  }
  if (r.mbind != 0) {
    out->printf(
        "NUMA refused mbind (%s): nothing bound (memory-only nodes left out, "
        "all memory placed by first touch); tc_numa_malloc_onnode and "
        "tc_numa_malloc_interleaved fail with EPERM\n",
        RefusalName(r.mbind));
  }
  if (r.home_node != 0) {
    out->printf(
        "NUMA refused set_mempolicy_home_node (%s): membind ranges fill "
        "from the faulting CPU's node\n",
        RefusalName(r.home_node));
  }
  if (r.move_pages != 0) {
    out->printf(
        "NUMA refused move_pages (%s): large blocks judged by the heap's "
        "notes, not the kernel's page nodes (%llu so far, %llu unnoted)\n",
        RefusalName(r.move_pages), CountOf(Counter::kWitnessedReturns),
        static_cast<unsigned long long>(UnnotedBlocks()));
  }
  if (const char* cpus = CpusSource()) {
    out->printf("NUMA CPUs: those of %s\n", cpus);
  }
}

// What the kernel's NUMA balancing did to the heaps, and what they did about
// it; nothing when it moves no page of ours.
void DumpBalancing(TCMalloc_Printer* out) {
  switch (BalancingCooperation()) {
    case Cooperation::kNone:
      return;
    case Cooperation::kCooperating:
      out->printf(
          "NUMA balancing: the kernel moves pages; %llu small-object spans "
          "checked, %llu released (moved away), %llu kept (moved again "
          "after a release)\n",
          CountOf(Counter::kMovedSpansChecked),
          CountOf(Counter::kMovedSpansReleased),
          CountOf(Counter::kMovedSpansKept));
      return;
    case Cooperation::kUnchecked:
      out->printf(RefusedCalls().move_pages != 0
                      ? "NUMA balancing: the kernel moves pages; not seen "
                        "(move_pages refused)\n"
                      : "NUMA balancing: the kernel moves pages; ignored "
                        "(TCMALLOC_NUMA_BALANCING=ignore)\n");
      return;
  }
}

// Whether the allocator's own metadata is kept where it was first written.
void DumpMetadataPlacement(TCMalloc_Printer* out) {
  if (!MetadataStaysPut()) return;
  out->printf(
      "NUMA metadata: kept off the kernel's balancing where first written; "
      "%llu mappings bound, %llu refused\n",
      static_cast<unsigned long long>(MetadataBinds()),
      static_cast<unsigned long long>(MetadataBindFailures()));
}

}  // namespace

void SetPlacedMemoryReader(const PlacedMemoryReader* reader) {
  __atomic_store_n(&g_placed_reader, reader, __ATOMIC_RELEASE);
}

void SetHandedOverBytesReader(uint64_t (*reader)()) {
  __atomic_store_n(&g_handed_over_reader, reader, __ATOMIC_RELEASE);
}

// `figure` of class cl's list, summed over the nodes whose lists are made.
template <typename Figure>
static size_t SumOverNodes(unsigned cl, Figure figure) {
  size_t n = 0;
  for (int node = 0; node < NodesWithCentralLists(); ++node) {
    if (NodeListsMade(node)) {
      n += figure(Static::central_cache()[NodeClass(node, cl)]);
    }
  }
  return n;
}

size_t CentralLength(unsigned cl) {
  size_t n = SumOverNodes(cl, [](CentralFreeList& l) { return l.length(); });
  if (const PlacedMemoryReader* r = PlacedReader()) n += r->central_length(cl);
  return n;
}

size_t TransferLength(unsigned cl) {
  size_t n = SumOverNodes(cl, [](CentralFreeList& l) { return l.tc_length(); });
  if (const PlacedMemoryReader* r = PlacedReader()) n += r->transfer_length(cl);
  return n;
}

size_t CentralOverheadBytes(unsigned cl) {
  if (cl == 0) {
    uint64_t (*reader)() =
        __atomic_load_n(&g_handed_over_reader, __ATOMIC_ACQUIRE);
    return reader != nullptr ? reader() : 0;
  }
  size_t n =
      SumOverNodes(cl, [](CentralFreeList& l) { return l.OverheadBytes(); });
  if (const PlacedMemoryReader* r = PlacedReader()) n += r->overhead_bytes(cl);
  return n;
}

// A placed region's system bytes, or its free bytes (pages and lists).
static size_t PlacedBytes(int region, bool system) {
  PageHeap::Stats stats;
  if (!PlacedStats(region, &stats)) stats = PageHeap::Stats();
  return system ? stats.system_bytes
                : stats.free_bytes + PlacedListBytes(region);
}

bool GetNumaProperty(const char* name, size_t* value) {
  const char* key = AfterPrefix(name, "tcmalloc.numa.");
  if (key == nullptr) return false;

  for (const ScalarProperty& p : kScalars) {
    if (strcmp(key, p.name) == 0) {
      *value = p.read();
      return true;
    }
  }
  for (const CounterName& c : kCounters) {
    if (strcmp(key, c.name) == 0) {
      *value = CounterValue(c.counter);
      return true;
    }
  }
  for (const RefusalProperty& c : kRefusals) {
    if (strcmp(key, c.name) == 0) {
      *value = static_cast<size_t>(RefusedCalls().*c.call);
      return true;
    }
  }
  if (strcmp(key, "placement_nodes") == 0) {
    *value = PopCount(PlacementNodes());
    return true;
  }
  bool system = strcmp(key, "interleaved_system_bytes") == 0;
  if (system || strcmp(key, "interleaved_free_bytes") == 0) {
    *value = PlacedBytes(kInterleavedRegion, system);
    return true;
  }

  const char* field = AfterPrefix(key, "node");
  int node_id;
  PageHeap::Stats stats;
  if (field == nullptr || !ParseNodeNumber(&field, &node_id)) return false;
  system = strcmp(field, "named_system_bytes") == 0;
  if (system || strcmp(field, "named_free_bytes") == 0) {
    // For a kernel id N that placement may use.
    if (!HasNode(PlacementNodes(), node_id)) return false;
    *value = PlacedBytes(NamedRegion(node_id), system);
    return true;
  }
  const int node = NodeOfKernelId(node_id);  // properties name kernel ids
  if (!NodeStats(node, &stats)) return false;
  RegionStats region;
  const bool has_region = GetRegionStats(node, &region);
  if (strncmp(field, "region_", 7) == 0 && !has_region) return false;
  if (strcmp(field, "region_begin") == 0) {
    *value = region.begin;
  } else if (strcmp(field, "region_end") == 0) {
    *value = region.end;
  } else if (strcmp(field, "region_reserved_bytes") == 0) {
    *value = region.reserved;
  } else if (strcmp(field, "region_committed_bytes") == 0) {
    *value = region.committed;
  } else if (strcmp(field, "central_cache_free_bytes") == 0) {
    *value = CentralFreeBytes(node);
  } else if (strcmp(field, "remote_free_inbox_bytes") == 0) {
    // Freed on other nodes, waiting for a refill on `node` to link them in.
    *value = node < kMaxCpuNodes ? InboxOf(node).bytes() : 0;
  } else if (strcmp(field, "pageheap_system_bytes") == 0) {
    *value = stats.system_bytes;
  } else if (strcmp(field, "pageheap_free_bytes") == 0) {
    *value = stats.free_bytes;
  } else if (strcmp(field, "pageheap_unmapped_bytes") == 0) {
    *value = stats.unmapped_bytes;
  } else {
    return false;
  }
  return true;
}

// One line per placed heap that exists.
static void DumpPlacedStats(TCMalloc_Printer* out) {
  for (int region = kFirstNamedRegion; region < kRegions; ++region) {
    PageHeap::Stats stats;
    if (!PlacedStats(region, &stats)) continue;
    const size_t list_bytes = PlacedListBytes(region);
    if (region == kInterleavedRegion) {
      out->printf("NUMA interleaved: ");
    } else {
      out->printf("NUMA named node %2d: ", PlacedKernelId(region));
    }
    out->printf(
        "%8.1f MiB system; %8.1f MiB page heap free; %8.1f MiB unmapped; "
        "%8.1f MiB in free lists\n",
        stats.system_bytes / kMiB, stats.free_bytes / kMiB,
        stats.unmapped_bytes / kMiB, list_bytes / kMiB);
  }
}

void DumpNumaStats(TCMalloc_Printer* out) {
  if (!Active() && !PlacementStarted()) return;
  out->printf("------------------------------------------------\n");
  if (!Active()) {
    out->printf("NUMA: layer inactive; memory placed by the program:\n");
    DumpRefusals(out);
    DumpPlacedStats(out);
    return;
  }
  out->printf(
      "NUMA: %d nodes; policy %s%s; %llu mbind calls, %llu failed; "
      "%llu region failures; %llu large blocks released for reuse\n",
      NumNodes(),
      Policy() == BindPolicy::kBind        ? "bind"
      : Policy() == BindPolicy::kPreferred ? "preferred"
                                           : "local",
      FakeTopology() ? " (fake topology)" : "",
      static_cast<unsigned long long>(MbindCalls()),
      static_cast<unsigned long long>(MbindFailures()),
      static_cast<unsigned long long>(RegionFailures()),
      CountOf(Counter::kReleasedForReuse));
  DumpRefusals(out);
  DumpBalancing(out);
  DumpMetadataPlacement(out);
  out->printf(
      "NUMA small objects: %d CPU nodes; remote frees %s; migration %s; "
      "%llu remote-free objects, %llu thread migrations, %llu objects "
      "flushed, %llu rerouted, %llu borrowed, %llu linked in by their "
      "freeing thread\n",
      NodesWithCentralLists(),
      RemoteFreePolicy() == RemoteFree::kOwner        ? "owner"
      : RemoteFreePolicy() == RemoteFree::kOwnerLists ? "owner-lists"
                                                      : "local",
      MigrationPolicy() == Migration::kDrain ? "drain" : "flush",
      CountOf(Counter::kRemoteFreeObjects), CountOf(Counter::kThreadMigrations),
      CountOf(Counter::kFlushedObjects), CountOf(Counter::kReroutedObjects),
      CountOf(Counter::kBorrowedObjects), CountOf(Counter::kInboxFullObjects));
  out->printf(
      "NUMA unstranding: %llu releases and retirements of other nodes' "
      "heaps\n",
      CountOf(Counter::kUnstrandings));
  for (int node = 0; node < NumNodes(); node++) {
    PageHeap::Stats stats;
    if (!NodeStats(node, &stats)) continue;
    RegionStats region = {};
    GetRegionStats(node, &region);
    out->printf(
        "NUMA node %2d: %8.1f MiB system; %8.1f MiB page heap free; "
        "%8.1f MiB unmapped; %8.1f MiB central cache free; region at "
        "0x%012llx: %8.1f MiB reserved, %8.1f MiB committed\n",
        KernelId(node), stats.system_bytes / kMiB, stats.free_bytes / kMiB,
        stats.unmapped_bytes / kMiB, CentralFreeBytes(node) / kMiB,
        static_cast<unsigned long long>(region.begin), region.reserved / kMiB,
        region.committed / kMiB);
  }
  DumpPlacedStats(out);
}

void MaybePrintNumaStatsAtExit() {
  if (!StatsAtExit()) return;
  // Stack buffer: this runs at exit, where malloc may be half torn down.
  char buffer[8 << 10];
  TCMalloc_Printer printer(buffer, sizeof(buffer));
  if (Active() || PlacementStarted()) {
    DumpNumaStats(&printer);
  } else {
    printer.printf("NUMA: inactive (one node heap)\n");
    DumpRefusals(&printer);
  }
  ssize_t unused = write(STDERR_FILENO, buffer, strlen(buffer));
  (void)unused;
}

}  // namespace numa
}  // namespace tcmalloc
