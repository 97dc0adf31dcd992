// Glue between the NUMA layer and gperftools' introspection: the
// "tcmalloc.numa.*" MallocExtension properties and the per-node block of
// GetStats. Compiled only inside the patched gperftools tree (it needs the
// page heap), as src/numa/introspection.cc.
#ifndef NUMA_TCMALLOC_NUMA_INTROSPECTION_H_
#define NUMA_TCMALLOC_NUMA_INTROSPECTION_H_

#include <stddef.h>
#include <stdint.h>

#include "numa/numa.h"

class TCMalloc_Printer;

namespace tcmalloc {
namespace numa {

// Answers the "tcmalloc.numa.*" numeric properties (docs/stats.md lists
// them); false for any other name and for nodes the process cannot use. <N>
// in a name is the kernel's node id; a node that has not allocated yet reads 0.
NUMA_TCMALLOC_HIDDEN bool GetNumaProperty(const char* name, size_t* value);

// What introspection reads of placed memory's lists, registered by their
// glue (numa/placed.h) once placement starts.
struct PlacedMemoryReader {
  size_t (*central_length)(unsigned cl);   // in caches and central lists
  size_t (*transfer_length)(unsigned cl);  // in transfer caches
  size_t (*overhead_bytes)(unsigned cl);
  size_t (*free_bytes)(int region);  // all classes of one placed region
};
NUMA_TCMALLOC_HIDDEN void SetPlacedMemoryReader(
    const PlacedMemoryReader* reader);

// Free objects of size class cl in the central lists (CentralLength) and
// transfer-cache slots (TransferLength), and the lists' internal
// fragmentation in bytes, summed over the CPU nodes and placed memory's lists:
// the totals GetStats and GetFreeListSizes report, as in vanilla. Class 0 (no
// size class, no list) has as "overhead" the bytes of remote frees handed to
// their owner and not yet linked in (SetHandedOverBytesReader); ExtractStats
// adds them to the central lists' total, and the class table skips class 0.
NUMA_TCMALLOC_HIDDEN size_t CentralLength(unsigned cl);
NUMA_TCMALLOC_HIDDEN size_t TransferLength(unsigned cl);
NUMA_TCMALLOC_HIDDEN size_t CentralOverheadBytes(unsigned cl);

// Registers what reads the bytes of remote frees handed to their owner and
// not yet linked in (numa/thread_cache_nodes.h, later in the series); until
// then class 0's overhead is 0, as in vanilla.
NUMA_TCMALLOC_HIDDEN void SetHandedOverBytesReader(uint64_t (*reader)());

// Appends one line per node heap to GetStats output, and one per placed
// heap. Prints nothing unless the layer is active or the program placed
// memory, so single-node stats text stays vanilla's.
NUMA_TCMALLOC_HIDDEN void DumpNumaStats(TCMalloc_Printer* out);

// Writes the per-node block to stderr if TCMALLOC_NUMA_STATS=1 (at exit).
NUMA_TCMALLOC_HIDDEN void MaybePrintNumaStatsAtExit();

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_INTROSPECTION_H_
