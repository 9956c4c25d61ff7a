// The GPU presets against published nccl-tests measurements
// (docs/validation.md, section 2): the published tables stay what the study
// computes, and each table's geomean error within its bound.
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "config/input_error.h"
#include "reproduce/nccl_tests.h"
#include "test_paths.h"

namespace acesim {
namespace {

const std::vector<NcclTestsTable>& study() {
  static const std::vector<NcclTestsTable> tables = run_nccl_tests(test::data_dir());
  return tables;
}

std::string doc_tables() {
  std::ifstream in(test::source_dir() + "/docs/validation.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::size_t b = doc.find("<!-- nccl-tests tables: begin");
  const std::size_t e = doc.find("<!-- nccl-tests tables: end -->");
  if (b == std::string::npos || e == std::string::npos || e < b) return "(markers missing)";
  const std::size_t start = doc.find('\n', b) + 1;
  return doc.substr(start, e - start);
}

TEST(NcclTests, DocumentedTablesAreWhatTheStudyComputes) {
  EXPECT_EQ(doc_tables(), nccl_tests_tables(study()))
      << "docs/validation.md section 2 is out of date: paste `acesim reproduce nccl-tests`'s tables";
}

// Today's errors, as docs/validation.md states them (issue 15's goals are
// 10% on 8-GPU H100 all-reduce and 15% across nodes): a change that makes a
// table worse fails here; one that makes it better lowers its bound.
// Modelling NVLS-tree raised the 2x8 and 4x8 H100 defaults' bounds (23.4 ->
// 28.9%, 24.7 -> 26.4%: medium sizes now run NVLS-tree, whose ramp to its
// peak is not modelled, docs/validation.md) and lowered 2x8 H200's (21.1 ->
// 9.7%).
TEST(NcclTests, EachTableStaysWithinItsBound) {
  const std::map<std::string, double> bound = {
      {"8x H100 all-reduce (default: NVLS)", 0.105},      {"8x H200 all-reduce (default: NVLS)", 0.12},
      {"8x H100 reduce-scatter (ring)", 0.05},            {"8x A100 all-reduce (default)", 0.285},
      {"2x8 H100 all-reduce (ring; 24 CTAs)", 0.085},     {"2x8 H100 all-reduce (default: NVLS-tree)", 0.295},
      {"2x8 H200 all-reduce (default: NVLS-tree)", 0.10}, {"4x8 H100 all-reduce (default)", 0.27},
  };
  ASSERT_EQ(study().size(), bound.size());
  for (const NcclTestsTable& t : study()) {
    SCOPED_TRACE(t.title);
    ASSERT_TRUE(bound.count(t.title));
    EXPECT_LE(t.geomean_error(), bound.at(t.title));
    EXPECT_GE(t.rows.size(), 5u);
  }
}

TEST(NcclTests, BusBandwidthComesFromThePublishedTimes) {
  // nccl-tests#290, 4 GiB: 15870 us on 8 GPUs: 4294967296 / 15870e-6 s x 2(7/8)
  // = 473.6 GB/s, the busbw it prints.
  for (const NcclTestsTable& t : study()) {
    if (t.title != "8x H100 all-reduce (default: NVLS)") continue;
    EXPECT_NEAR(t.rows.back().measured_busbw_GBps, 473.6, 0.05);
    return;
  }
  ADD_FAILURE() << "table missing";
}

TEST(NcclTests, MissingDataIsAnInputError) {
  EXPECT_THROW(run_nccl_tests("/nonexistent"), InputError);
}

}  // namespace
}  // namespace acesim
