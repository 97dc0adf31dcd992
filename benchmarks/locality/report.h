// Printing results: a readable table, CSV or JSON, one row per workload and
// size class.
#ifndef BENCHMARKS_LOCALITY_REPORT_H_
#define BENCHMARKS_LOCALITY_REPORT_H_

#include <cstdio>
#include <string>
#include <vector>

#include "benchmarks/locality/page_log.h"

namespace locality {

struct Row {
  std::string workload;
  std::string size_class;  // "all", "small" (<= 256 KiB) or "page" (> 256 KiB)
  bool ran;
  std::string reason;  // when !ran
  Tally tally;
};

enum class Format { kTable, kCsv, kJson };

void PrintRows(std::FILE* out, Format format, const std::string& label,
               int nodes, const std::vector<Row>& rows);

}  // namespace locality

#endif  // BENCHMARKS_LOCALITY_REPORT_H_
