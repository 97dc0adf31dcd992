// The NUMA layer as one translation unit, for upstream's build lists: the
// patched CMakeLists.txt and Makefile.am name this file alone, so a file added
// to the layer never touches them. numa/BUILD compiles the same files one by
// one (and the unit tests link them so), which keeps each file's includes
// honest. The allocator's own glue (introspection.cc, node_heaps.cc, ...)
// needs upstream's internals and is built by the patch that needs it.
//
// Inside the gperftools tree this file lives at src/numa/layer.cc.
#include "numa/balancing.cc"
#include "numa/config.cc"
#include "numa/counters.cc"
#include "numa/idle_nodes.cc"
#include "numa/init.cc"
#include "numa/mempolicy.cc"
#include "numa/numa.cc"
#include "numa/page_sample.cc"
#include "numa/parse.cc"
#include "numa/placed_start.cc"
#include "numa/policy.cc"
#include "numa/region.cc"
#include "numa/remote_free_log.cc"
#include "numa/reuse_witness.cc"
#include "numa/small_objects.cc"
#include "numa/sparse_memory.cc"
#include "numa/stranded_nodes.cc"
#include "numa/topology.cc"
