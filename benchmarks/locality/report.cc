#include "benchmarks/locality/report.h"

namespace locality {
namespace {

// Percent of pages that were local; -1 when there is nothing to measure.
double LocalPercent(const Tally& t) {
  return t.pages == 0 ? -1
                      : 100.0 * static_cast<double>(t.local) /
                            static_cast<double>(t.pages);
}

void PrintTable(std::FILE* out, const std::string& label, int nodes,
                const std::vector<Row>& rows) {
  std::fprintf(out, "allocator %s, %d node(s) with CPUs\n", label.c_str(),
               nodes);
  std::fprintf(out, "%-18s %-6s %9s %9s %8s\n", "workload", "class", "pages",
               "local", "local%");
  for (const Row& r : rows) {
    if (!r.ran) {
      std::fprintf(out, "%-18s %-6s %9s %9s %8s  (%s)\n", r.workload.c_str(),
                   r.size_class.c_str(), "-", "-", "n/a", r.reason.c_str());
      continue;
    }
    std::fprintf(
        out, "%-18s %-6s %9llu %9llu %8.2f", r.workload.c_str(),
        r.size_class.c_str(), static_cast<unsigned long long>(r.tally.pages),
        static_cast<unsigned long long>(r.tally.local), LocalPercent(r.tally));
    if (r.tally.unknown != 0) {
      std::fprintf(out, "  (%llu pages not present)",
                   static_cast<unsigned long long>(r.tally.unknown));
    }
    std::fputc('\n', out);
  }
}

void PrintCsv(std::FILE* out, const std::string& label, int nodes,
              const std::vector<Row>& rows) {
  std::fprintf(
      out, "allocator,nodes,workload,class,pages,local,unknown,local_pct\n");
  for (const Row& r : rows) {
    if (!r.ran) continue;
    std::fprintf(out, "%s,%d,%s,%s,%llu,%llu,%llu,%.2f\n", label.c_str(), nodes,
                 r.workload.c_str(), r.size_class.c_str(),
                 static_cast<unsigned long long>(r.tally.pages),
                 static_cast<unsigned long long>(r.tally.local),
                 static_cast<unsigned long long>(r.tally.unknown),
                 LocalPercent(r.tally));
  }
}

void PrintJson(std::FILE* out, const std::string& label, int nodes,
               const std::vector<Row>& rows) {
  std::fprintf(out, "{\"allocator\": \"%s\", \"nodes\": %d, \"rows\": [",
               label.c_str(), nodes);
  const char* sep = "\n";
  for (const Row& r : rows) {
    if (!r.ran) continue;
    std::fprintf(
        out,
        "%s  {\"workload\": \"%s\", \"class\": \"%s\", \"pages\": %llu, "
        "\"local\": %llu, \"unknown\": %llu, \"local_pct\": %.2f}",
        sep, r.workload.c_str(), r.size_class.c_str(),
        static_cast<unsigned long long>(r.tally.pages),
        static_cast<unsigned long long>(r.tally.local),
        static_cast<unsigned long long>(r.tally.unknown),
        LocalPercent(r.tally));
    sep = ",\n";
  }
  std::fprintf(out, "\n]}\n");
}

}  // namespace

void PrintRows(std::FILE* out, Format format, const std::string& label,
               int nodes, const std::vector<Row>& rows) {
  switch (format) {
    case Format::kTable:
      PrintTable(out, label, nodes, rows);
      break;
    case Format::kCsv:
      PrintCsv(out, label, nodes, rows);
      break;
    case Format::kJson:
      PrintJson(out, label, nodes, rows);
      break;
  }
  std::fflush(out);
}

}  // namespace locality
