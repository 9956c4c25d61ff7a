// ACE streams a chunk larger than its SRAM in pieces of at most half the
// SRAM (docs/model.md, "ace executor"): closed forms, and the chunks that
// fit unchanged.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "support.h"
#include "test_data.h"

namespace acesim {
namespace {

// A ring of 8 at 50 GB/s and 500 ns per link, one chunk per collective; ACE's
// DMA, ALUs and HBM are fast enough never to bind.
PlatformConfig ring8_ace(std::uint64_t sram_bytes) {
  PlatformConfig p = test::platform({test::dim(DimKind::kRing, 8, 50, 500)});
  p.npu.executor = "ace";
  p.npu.ace.sram_bytes = sram_bytes;
  return p;
}

// Ring all-reduce of c bytes in k pieces: 2(n-1) steps of (L + c/(k n B)) each.
double streamed_ns(double c, int k) { return k * 14.0 * (500.0 + c / k / 8.0 / 50.0); }

TEST(AceStreaming, AChunkThatFitsRunsWhole) {
  const double c = 4 << 20;  // exactly the SRAM
  EXPECT_NEAR(test::time_ns(ring8_ace(4 << 20), CollectiveOp::kAllReduce, c), streamed_ns(c, 1), 1e-3);
}

TEST(AceStreaming, ALargerChunkStreamsInPiecesOfHalfTheSram) {
  // 16 MiB per NPU through 4 MiB of SRAM: ceil(16 / 2) = 8 pieces of 2 MiB.
  const double c = 16 << 20;
  const PlatformConfig p = ring8_ace(4 << 20);
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, c), streamed_ns(c, 8), 1e-3);
  CollectiveRequestSpec req;
  EXPECT_EQ(run_collective(p, req, 16 << 20).chunks, 8);
  // Just over the SRAM: ceil((4 MiB + 8) / 2 MiB) = 3 pieces.
  const double d = (4 << 20) + 8;
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, d), streamed_ns(d, 3), 1e-3);
  // The same bytes split by the platform into 8 chunks take the same time.
  PlatformConfig chunked = p;
  chunked.collectives.chunks = 8;
  EXPECT_NEAR(test::time_ns(chunked, CollectiveOp::kAllReduce, c), streamed_ns(c, 8), 1e-3);
}

TEST(AceStreaming, AllGatherFootprintIsItsOutput) {
  // All-gather of 8 MiB (output per NPU), 1 MiB input: footprint 8 MiB through
  // 2 MiB of SRAM: 8 pieces; each step moves c/(k n) bytes.
  const double c = 8 << 20;
  const PlatformConfig p = ring8_ace(2 << 20);
  const double expected = 8 * 7.0 * (500.0 + c / 8 / 8.0 / 50.0);
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllGather, c), expected, 1e-3);
}

class AceStreamingCli : public test::CliTest {};

TEST_F(AceStreamingCli, AstraSimsFourChunkSampleRuns) {
  // ASTRA-sim's own sample: 4 chunks of a 64 MiB all-reduce, 16 MiB each,
  // stream through the 4 MiB SRAM as 8 pieces each.
  const test::CliRun r = run({"collective", "--network", test::kNet + "Ring_8npus.yml", "--system",
                              test::kSys + "Ring_4chunks.json", "--executor", "ace", "--bytes", "64MiB", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["results"][0]["chunks"], 32);
  const test::CliRun t = run({"characterize", "traffic", "--chunks", "1", "--bytes", "64MiB", "--json"});
  EXPECT_EQ(t.status, 0) << t.err;
}

}  // namespace
}  // namespace acesim
