// Where the kernel holds a set of pages, asked two ways so that the lab can
// measure inside a process whose seccomp filter refuses move_pages (a
// container's default profile: tests/containers).
//
//  1. move_pages(0, n, pages, NULL, status, 0): a query, it moves nothing.
//  2. If the kernel refuses it (EPERM, ENOSYS): each page's frame number from
//     /proc/self/pagemap (root with CAP_SYS_ADMIN: others read 0) and the
//     node of the frame's memory block
//     (/sys/devices/system/memory/memoryM/nodeN).
//
// Neither way mallocs: callers measure the allocator under test.
#ifndef BENCHMARKS_LOCALITY_PAGE_QUERY_H_
#define BENCHMARKS_LOCALITY_PAGE_QUERY_H_

#include <cstddef>

namespace locality {

// status[i] = the node of pages[i] (page aligned), or a negative errno for a
// page the kernel does not hold (-ENOENT: never written), as move_pages
// reports. False, with errno set, if neither way could answer.
bool QueryPageNodes(size_t n, void* const* pages, int* status);

// Which way answered last: "move_pages" or "pagemap" (nullptr before any).
const char* PageQueryMethod();

// Tests only: skip move_pages, as if the kernel refused it.
void ForcePagemapForTest(bool on);

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_PAGE_QUERY_H_
