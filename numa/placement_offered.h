// Whether this library offers memory placement (numa/placed.h): not in the
// debug libraries, whose free() checks a header in front of every block
// that placed memory has not.
//
// Only tcmalloc.cc includes this file, and debugallocation.cc compiles
// tcmalloc.cc with TCMALLOC_USING_DEBUGALLOCATION defined: so the definition
// is made once per library, where it is known which library it is.
#ifndef NUMA_TCMALLOC_NUMA_PLACEMENT_OFFERED_H_
#define NUMA_TCMALLOC_NUMA_PLACEMENT_OFFERED_H_

#include "numa/placed.h"

namespace tcmalloc {
namespace numa {

bool PlacementOffered() {
#ifdef TCMALLOC_USING_DEBUGALLOCATION
  return false;
#else
  return true;
#endif
}

}  // namespace numa
}  // namespace tcmalloc

#endif  // NUMA_TCMALLOC_NUMA_PLACEMENT_OFFERED_H_
