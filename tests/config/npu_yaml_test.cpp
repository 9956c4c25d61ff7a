// The endpoint keys of the native platform YAML (npu, communication,
// collectives.max_chunk_bytes) and the NPU that ASTRA-sim inputs get. Good
// files are checked value by value; bad ones must throw InputError naming the
// file, line and key, and the problem, in one line.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "api/api.h"
#include "config/input_error.h"
#include "config/platform.h"
#include "config/yaml_errors.h"
#include "endpoint/npu_config.h"
#include "test_data.h"

namespace acesim {
namespace {

using test::ring8;

using test::kNet;
using test::kSys;


PlatformConfig parse(const std::string& extra) { return parse_platform_yaml(ring8(extra), "npu.yaml"); }

std::string error_of(const std::string& text, const std::string& file = "bad.yaml") { return test::yaml_error_of(text, file); }

// `extra` appended to ring8() must be refused with a one-line message that
// starts with "bad.yaml:<line>: <key>: " and contains each of `parts`.
void expect_error(const std::string& extra, int line, const std::string& key,
                  std::initializer_list<std::string> parts = {}) {
  SCOPED_TRACE(extra);
  const std::string msg = error_of(ring8(extra));
  const std::string prefix = "bad.yaml:" + std::to_string(line) + ": " + key + ": ";
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: " << msg << "\nexpected prefix: " << prefix;
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
}

// ---------------------------------------------------------------- good input

TEST(NpuYaml, FileWithoutEndpointSectionsGetsTheDefaultNpu) {
  const PlatformConfig p = parse("");
  const NpuConfig& n = p.npu;
  EXPECT_EQ(n.compute_units, 80);
  EXPECT_DOUBLE_EQ(n.unit_TFLOPS, 1.5);
  EXPECT_DOUBLE_EQ(n.peak_flops(), 120e12);
  EXPECT_DOUBLE_EQ(n.hbm_GBps, 900.0);
  EXPECT_DOUBLE_EQ(n.hbm_capacity_GB, 0.0);  // unknown
  EXPECT_EQ(n.hbm_sharing, HbmSharing::kFair);
  EXPECT_DOUBLE_EQ(n.hbm_comm_share, 0.5);
  EXPECT_DOUBLE_EQ(n.timed_kernel_hbm_fraction, 0.5);
  EXPECT_FALSE(n.fixed_kernel_times);
  EXPECT_EQ(n.executor, "ideal");
  EXPECT_EQ(n.sm.units, 8);
  EXPECT_DOUBLE_EQ(n.sm.copy_GBps_per_unit, 20.0);
  EXPECT_DOUBLE_EQ(n.sm.reduce_GBps_per_unit, 15.0);
  EXPECT_DOUBLE_EQ(n.sm.hbm_per_byte_reduce, 5.0);
  EXPECT_DOUBLE_EQ(n.sm.hbm_per_byte_gather, 2.0);
  EXPECT_DOUBLE_EQ(n.sm.hbm_per_byte_alltoall, 2.0);
  EXPECT_EQ(n.ace.sram_bytes, 4ull << 20);
  EXPECT_DOUBLE_EQ(n.ace.alu_GBps, 400.0);
  EXPECT_DOUBLE_EQ(n.ace.dma_GBps, 400.0);
  EXPECT_EQ(p.collectives.max_chunk_bytes, 0u);  // off
  EXPECT_EQ(validate(n), "");
}

TEST(NpuYaml, DefaultPresetUsesAceWithOneMiBChunks) {
  const PlatformConfig p = default_platform();
  EXPECT_EQ(p.npu.executor, "ace");
  EXPECT_EQ(p.npu.compute_units, 80);
  EXPECT_DOUBLE_EQ(p.npu.unit_TFLOPS, 1.5);
  EXPECT_DOUBLE_EQ(p.npu.hbm_GBps, 900.0);
  EXPECT_EQ(p.npu.hbm_sharing, HbmSharing::kFair);
  EXPECT_EQ(p.npu.sm.units, 8);
  EXPECT_DOUBLE_EQ(p.npu.sm.copy_GBps_per_unit, 20.0);
  EXPECT_DOUBLE_EQ(p.npu.sm.reduce_GBps_per_unit, 15.0);
  EXPECT_DOUBLE_EQ(p.npu.sm.hbm_per_byte_reduce, 5.0);
  EXPECT_DOUBLE_EQ(p.npu.sm.hbm_per_byte_gather, 2.0);
  EXPECT_DOUBLE_EQ(p.npu.sm.hbm_per_byte_alltoall, 2.0);
  EXPECT_EQ(p.npu.ace.sram_bytes, 4ull << 20);
  EXPECT_DOUBLE_EQ(p.npu.ace.alu_GBps, 400.0);
  EXPECT_DOUBLE_EQ(p.npu.ace.dma_GBps, 400.0);
  EXPECT_EQ(p.collectives.max_chunk_bytes, 1ull << 20);
  EXPECT_EQ(p.collectives.chunks, 16);
}

TEST(NpuYaml, EveryKeyIsRead) {
  const PlatformConfig p = parse(
      "npu:\n"
      "  compute_units: 108\n"
      "  unit_TFLOPS: 2.5\n"
      "  hbm_GBps: 2039.5\n"
      "  hbm_capacity_GB: 80\n"
      "  hbm_sharing: static\n"
      "  hbm_comm_share: 0.25\n"
      "  timed_kernel_hbm_fraction: 0.75\n"
      "  fixed_kernel_times: true\n"
      "communication:\n"
      "  executor: sm\n"
      "  sm:\n"
      "    units: 16\n"
      "    copy_GBps_per_unit: 30\n"
      "    reduce_GBps_per_unit: 12.5\n"
      "    hbm_bytes_per_byte_sent: {reduce-scatter: 4, all-gather: 1.5, all-to-all: 3}\n"
      "  ace:\n"
      "    sram: 8MiB\n"
      "    alu_GBps: 600\n"
      "    dma_GBps: 700\n"
      "collectives:\n"
      "  max_chunk_bytes: 512KiB\n");
  const NpuConfig& n = p.npu;
  EXPECT_EQ(n.compute_units, 108);
  EXPECT_DOUBLE_EQ(n.unit_TFLOPS, 2.5);
  EXPECT_DOUBLE_EQ(n.peak_flops(), 270e12);
  EXPECT_DOUBLE_EQ(n.hbm_GBps, 2039.5);
  EXPECT_DOUBLE_EQ(n.hbm_capacity_GB, 80.0);
  EXPECT_EQ(n.hbm_sharing, HbmSharing::kStatic);
  EXPECT_DOUBLE_EQ(n.hbm_comm_share, 0.25);
  EXPECT_DOUBLE_EQ(n.timed_kernel_hbm_fraction, 0.75);
  EXPECT_TRUE(n.fixed_kernel_times);
  EXPECT_EQ(n.executor, "sm");
  EXPECT_EQ(n.sm.units, 16);
  EXPECT_DOUBLE_EQ(n.sm.copy_GBps_per_unit, 30.0);
  EXPECT_DOUBLE_EQ(n.sm.reduce_GBps_per_unit, 12.5);
  EXPECT_DOUBLE_EQ(n.sm.hbm_per_byte_reduce, 4.0);
  EXPECT_DOUBLE_EQ(n.sm.hbm_per_byte_gather, 1.5);
  EXPECT_DOUBLE_EQ(n.sm.hbm_per_byte_alltoall, 3.0);
  EXPECT_EQ(n.ace.sram_bytes, 8ull << 20);
  EXPECT_DOUBLE_EQ(n.ace.alu_GBps, 600.0);
  EXPECT_DOUBLE_EQ(n.ace.dma_GBps, 700.0);
  EXPECT_EQ(p.collectives.max_chunk_bytes, 512ull << 10);
  EXPECT_EQ(validate(n), "");
  // all-reduce is half reduce-scatter, half all-gather.
  EXPECT_DOUBLE_EQ(sm_hbm_per_byte(n.sm, CollectiveOp::kAllReduce), 2.75);
}

TEST(NpuYaml, PartialSectionsKeepTheOtherDefaults) {
  const PlatformConfig p = parse(
      "communication:\n"
      "  executor: ace\n"
      "  ace: {sram: 1048576}\n");
  EXPECT_EQ(p.npu.executor, "ace");
  EXPECT_EQ(p.npu.ace.sram_bytes, 1ull << 20);
  EXPECT_DOUBLE_EQ(p.npu.ace.alu_GBps, 400.0);
  EXPECT_EQ(p.npu.sm.units, 8);
  EXPECT_EQ(p.npu.compute_units, 80);
  const PlatformConfig q = parse("communication:\n  sm:\n    hbm_bytes_per_byte_sent: {all-gather: 0}\n");
  EXPECT_DOUBLE_EQ(q.npu.sm.hbm_per_byte_gather, 0.0);
  EXPECT_DOUBLE_EQ(q.npu.sm.hbm_per_byte_reduce, 5.0);
  EXPECT_DOUBLE_EQ(q.npu.sm.hbm_per_byte_alltoall, 2.0);
}

TEST(NpuYaml, NamesIgnoreCaseAndSeparators) {
  EXPECT_EQ(parse("communication: {executor: SM}\n").npu.executor, "sm");
  EXPECT_EQ(parse("communication: {executor: Ace}\n").npu.executor, "ace");
  EXPECT_EQ(parse("communication: {executor: IDEAL}\n").npu.executor, "ideal");
  EXPECT_EQ(parse("npu: {hbm_sharing: fair}\n").npu.hbm_sharing, HbmSharing::kFair);
  EXPECT_EQ(parse("npu: {hbm_sharing: compute_priority}\n").npu.hbm_sharing, HbmSharing::kComputePriority);
  EXPECT_EQ(parse("npu: {hbm_sharing: ComputePriority}\n").npu.hbm_sharing, HbmSharing::kComputePriority);
  EXPECT_EQ(parse("npu: {hbm_sharing: communication-priority}\n").npu.hbm_sharing, HbmSharing::kCommPriority);
  EXPECT_EQ(parse("npu: {hbm_sharing: comm-priority}\n").npu.hbm_sharing, HbmSharing::kCommPriority);
  EXPECT_EQ(parse("npu: {hbm_sharing: STATIC}\n").npu.hbm_sharing, HbmSharing::kStatic);
}

TEST(NpuYaml, BooleansAndBoundaries) {
  for (const char* t : {"true", "yes", "on"}) {
    EXPECT_TRUE(parse(std::string("npu: {fixed_kernel_times: ") + t + "}\n").npu.fixed_kernel_times) << t;
  }
  for (const char* f : {"false", "no", "off"}) {
    EXPECT_FALSE(parse(std::string("npu: {fixed_kernel_times: ") + f + "}\n").npu.fixed_kernel_times) << f;
  }
  // [0, 1] for timed_kernel_hbm_fraction, both ends included.
  EXPECT_DOUBLE_EQ(parse("npu: {timed_kernel_hbm_fraction: 0}\n").npu.timed_kernel_hbm_fraction, 0.0);
  EXPECT_DOUBLE_EQ(parse("npu: {timed_kernel_hbm_fraction: 1}\n").npu.timed_kernel_hbm_fraction, 1.0);
  EXPECT_EQ(parse("npu: {compute_units: 1}\ncommunication: {sm: {units: 1}}\n").npu.compute_units, 1);
  EXPECT_EQ(parse("communication: {ace: {sram: 1}}\n").npu.ace.sram_bytes, 1u);
  EXPECT_EQ(parse("communication: {ace: {sram: 1TiB}}\n").npu.ace.sram_bytes, 1ull << 40);
  EXPECT_EQ(parse("communication: {ace: {sram: 2MB}}\n").npu.ace.sram_bytes, 2'000'000u);
  EXPECT_EQ(parse("collectives: {max_chunk_bytes: 4096}\n").collectives.max_chunk_bytes, 4096u);
  EXPECT_EQ(parse("collectives: {max_chunk_bytes: 1.5MB}\n").collectives.max_chunk_bytes, 1'500'000u);
}

TEST(NpuYaml, HbmCommShareNeedsStaticSharingInAnyKeyOrder) {
  // hbm_comm_share written before hbm_sharing: still accepted.
  const PlatformConfig p = parse("npu:\n  hbm_comm_share: 0.3\n  hbm_sharing: static\n");
  EXPECT_EQ(p.npu.hbm_sharing, HbmSharing::kStatic);
  EXPECT_DOUBLE_EQ(p.npu.hbm_comm_share, 0.3);
  // Static sharing without a share uses 0.5.
  EXPECT_DOUBLE_EQ(parse("npu: {hbm_sharing: static}\n").npu.hbm_comm_share, 0.5);
}

TEST(NpuYaml, SmUnitsAreCheckedAgainstComputeUnitsInAnyOrder) {
  // communication written before npu: the check uses the file's compute_units.
  const PlatformConfig p = parse("communication:\n  sm: {units: 16}\nnpu:\n  compute_units: 16\n");
  EXPECT_EQ(p.npu.sm.units, 16);
  EXPECT_EQ(p.npu.compute_units, 16);
  expect_error("communication:\n  sm: {units: 17}\nnpu:\n  compute_units: 16\n", 7, "communication.sm.units",
               {"1..npu.compute_units (16)", "got 17"});
  // Fewer units than the default sm.units (8) need sm.units given.
  expect_error("npu:\n  compute_units: 4\n", 7, "npu.compute_units", {"communication.sm.units", "8"});
  EXPECT_EQ(parse("npu:\n  compute_units: 4\ncommunication:\n  sm: {units: 4}\n").npu.sm.units, 4);
}

// ----------------------------------------------------------------- ASTRA-sim

TEST(NpuAstra, SystemFileSetsHbmAndPerUnitFlopsAndExecutorIsIdeal) {
  const PlatformConfig p = load_astra_platform(kNet + "hgx_h100_16gpu.yml", kSys + "hgx_h100_16gpu.json");
  EXPECT_EQ(p.npu.executor, "ideal");
  EXPECT_EQ(p.npu.compute_units, 80);
  EXPECT_DOUBLE_EQ(p.npu.hbm_GBps, 3350.0);            // local-mem-bw
  EXPECT_DOUBLE_EQ(p.npu.unit_TFLOPS, 700.0 / 80.0);  // peak-perf / compute units
  EXPECT_DOUBLE_EQ(p.npu.peak_flops(), 700e12);
  // The rest is the default NPU.
  EXPECT_EQ(p.npu.hbm_sharing, HbmSharing::kFair);
  EXPECT_EQ(p.npu.sm.units, 8);
  EXPECT_EQ(p.npu.ace.sram_bytes, 4ull << 20);
  EXPECT_EQ(p.collectives.max_chunk_bytes, 0u);
  EXPECT_EQ(validate(p.npu), "");

  const PlatformConfig r = load_astra_platform(kNet + "Ring_8npus.yml", kSys + "Ring_4chunks.json");
  EXPECT_DOUBLE_EQ(r.npu.hbm_GBps, 1600.0);
  EXPECT_DOUBLE_EQ(r.npu.peak_flops(), 900e12);
}

TEST(NpuAstra, MissingKeysKeepTheDefaultNpu) {
  // local-mem-bw 3350, no peak-perf.
  const PlatformConfig p = load_astra_platform(kNet + "HGX-H100-validated.yml", kSys + "HGX-H100-validated.json");
  EXPECT_EQ(p.npu.executor, "ideal");
  EXPECT_DOUBLE_EQ(p.npu.hbm_GBps, 3350.0);
  EXPECT_DOUBLE_EQ(p.npu.unit_TFLOPS, 1.5);
}

// ----------------------------------------------------------------- bad input

TEST(NpuYamlErrors, ComputeUnits) {
  expect_error("npu:\n  compute_units: 0\n", 7, "npu.compute_units", {"1..1000000", "got 0"});
  expect_error("npu:\n  compute_units: -3\n", 7, "npu.compute_units", {"got -3"});
  expect_error("npu:\n  compute_units: 1000001\n", 7, "npu.compute_units", {"1..1000000"});
  expect_error("npu:\n  compute_units: eighty\n", 7, "npu.compute_units", {"expected an integer", "eighty"});
  expect_error("npu:\n  compute_units: 8.5\n", 7, "npu.compute_units", {"expected an integer"});
}

TEST(NpuYamlErrors, NonPositiveOrNonNumericRates) {
  struct Case {
    std::string section;  // "npu", "communication.sm" or "communication.ace"
    std::string key;
  };
  const Case cases[] = {{"npu", "unit_TFLOPS"},
                        {"npu", "hbm_GBps"},
                        {"communication.sm", "copy_GBps_per_unit"},
                        {"communication.sm", "reduce_GBps_per_unit"},
                        {"communication.ace", "alu_GBps"},
                        {"communication.ace", "dma_GBps"}};
  for (const Case& c : cases) {
    // npu keys on line 7; communication.sm/ace keys on line 8.
    const bool npu = c.section == "npu";
    const std::string head = npu ? "npu:\n" : "communication:\n  " + c.section.substr(14) + ":\n";
    const std::string indent = npu ? "  " : "    ";
    const int line = npu ? 7 : 8;
    const std::string key = c.section + "." + c.key;
    expect_error(head + indent + c.key + ": 0\n", line, key, {"must be > 0", "got 0"});
    expect_error(head + indent + c.key + ": -1\n", line, key, {"must be > 0", "got -1"});
    expect_error(head + indent + c.key + ": fast\n", line, key, {"expected a number", "fast"});
    expect_error(head + indent + c.key + ": 50GBps\n", line, key, {"expected a number"});
    expect_error(head + indent + c.key + ": .nan\n", line, key, {});
    expect_error(head + indent + c.key + ": .inf\n", line, key, {});
  }
  expect_error("npu:\n  unit_TFLOPS: 2e6\n", 7, "npu.unit_TFLOPS", {"<= 1e+06"});
  expect_error("npu:\n  hbm_GBps: 2e9\n", 7, "npu.hbm_GBps", {"<= 1e+09"});
}

TEST(NpuYamlErrors, SramSize) {
  expect_error("communication:\n  ace:\n    sram: 0\n", 8, "communication.ace.sram", {"must be > 0", "'0'"});
  expect_error("communication:\n  ace:\n    sram: 4M\n", 8, "communication.ace.sram", {"'4M'", "ambiguous", "MiB"});
  expect_error("communication:\n  ace:\n    sram: -1MiB\n", 8, "communication.ace.sram", {"'-1MiB'", "is not a size"});
  expect_error("communication:\n  ace:\n    sram: 2TiB\n", 8, "communication.ace.sram", {"at most 1 TiB"});
  expect_error("communication:\n  ace:\n    sram: 1.5B\n", 8, "communication.ace.sram", {"whole number of bytes"});
}

TEST(NpuYamlErrors, MaxChunkBytes) {
  expect_error("collectives:\n  max_chunk_bytes: 0\n", 7, "collectives.max_chunk_bytes", {"must be > 0"});
  expect_error("collectives:\n  max_chunk_bytes: 1M\n", 7, "collectives.max_chunk_bytes", {"ambiguous"});
  expect_error("collectives:\n  max_chunk_bytes: -1\n", 7, "collectives.max_chunk_bytes", {"is not a size"});
  expect_error("collectives:\n  max_chunk_bytes: big\n", 7, "collectives.max_chunk_bytes", {});
}

TEST(NpuYamlErrors, MoreSmUnitsThanComputeUnits) {
  expect_error("communication:\n  sm:\n    units: 81\n", 8, "communication.sm.units",
               {"1..npu.compute_units (80)", "got 81"});
  expect_error("npu: {compute_units: 8}\ncommunication:\n  sm:\n    units: 9\n", 9, "communication.sm.units",
               {"(8)", "got 9"});
  expect_error("communication:\n  sm:\n    units: 0\n", 8, "communication.sm.units", {"got 0"});
  expect_error("communication:\n  sm:\n    units: two\n", 8, "communication.sm.units", {"expected an integer"});
}

TEST(NpuYamlErrors, UnknownNamesSuggestTheClosest) {
  expect_error("communication:\n  executor: acee\n", 7, "communication.executor",
               {"unknown executor 'acee'", "did you mean 'ace'"});
  expect_error("communication:\n  executor: nccl\n", 7, "communication.executor",
               {"unknown executor 'nccl'", "ideal", "sm", "ace"});
  expect_error("npu:\n  hbm_sharing: fiar\n", 7, "npu.hbm_sharing", {"unknown policy 'fiar'", "did you mean 'fair'"});
  expect_error("npu:\n  hbm_sharing: priority\n", 7, "npu.hbm_sharing", {"unknown policy 'priority'", "compute-priority"});
}

TEST(NpuYamlErrors, UnknownKeysSuggest) {
  // sram_bytes is too far from 'sram' for "did you mean"; the valid keys are listed.
  expect_error("communication:\n  ace:\n    sram_bytes: 4MiB\n", 8, "communication.ace.sram_bytes",
               {"unknown key", "(valid: sram, alu_GBps, dma_GBps)"});
  expect_error("communication:\n  ace:\n    dma_GBs: 4\n", 8, "communication.ace.dma_GBs",
               {"unknown key", "did you mean 'dma_GBps'"});
  expect_error("npu:\n  compute_unit: 4\n", 7, "npu.compute_unit", {"unknown key", "did you mean 'compute_units'"});
  expect_error("npu:\n  hbm_GBs: 900\n", 7, "npu.hbm_GBs", {"unknown key", "did you mean 'hbm_GBps'"});
  expect_error("communication:\n  exector: sm\n", 7, "communication.exector", {"unknown key", "did you mean 'executor'"});
  expect_error("communication:\n  sm:\n    unit: 8\n", 8, "communication.sm.unit", {"unknown key", "did you mean 'units'"});
  // ACE's SRAM belongs to communication.ace, not npu.
  expect_error("npu:\n  sram: 4MiB\n", 7, "npu.sram", {"unknown key"});
  expect_error("comunication:\n  executor: sm\n", 6, "comunication", {"unknown key", "did you mean 'communication'"});
  expect_error("collectives:\n  max_chunk: 1MiB\n", 7, "collectives.max_chunk", {"unknown key", "max_chunk_bytes"});
}

TEST(NpuYamlErrors, HbmCommShare) {
  for (const char* v : {"0", "1", "-0.2", "1.5"}) {
    expect_error(std::string("npu:\n  hbm_sharing: static\n  hbm_comm_share: ") + v + "\n", 8, "npu.hbm_comm_share",
                 {"between 0 and 1 (exclusive)", std::string("got ") + v});
  }
  expect_error("npu:\n  hbm_sharing: static\n  hbm_comm_share: half\n", 8, "npu.hbm_comm_share", {"expected a number"});
  // Without static sharing the share means nothing and is refused.
  expect_error("npu:\n  hbm_comm_share: 0.3\n", 7, "npu.hbm_comm_share", {"only applies with hbm_sharing: static"});
  expect_error("npu:\n  hbm_sharing: fair\n  hbm_comm_share: 0.3\n", 8, "npu.hbm_comm_share",
               {"only applies with hbm_sharing: static"});
}

TEST(NpuYamlErrors, TimedKernelHbmFraction) {
  for (const char* v : {"-0.1", "1.01", "2"}) {
    expect_error(std::string("npu:\n  timed_kernel_hbm_fraction: ") + v + "\n", 7, "npu.timed_kernel_hbm_fraction",
                 {"must be in 0..1", std::string("got ") + v});
  }
  expect_error("npu:\n  timed_kernel_hbm_fraction: most\n", 7, "npu.timed_kernel_hbm_fraction", {"expected a number"});
}

TEST(NpuYamlErrors, HbmCapacity) {
  for (const char* v : {"-1", "-0.5", "2e9"}) {
    expect_error(std::string("npu:\n  hbm_capacity_GB: ") + v + "\n", 7, "npu.hbm_capacity_GB",
                 {"0..1e9 GB (0: unknown)", std::string("got ") + v});
  }
  for (const char* v : {"lots", "inf", "nan"}) {
    expect_error(std::string("npu:\n  hbm_capacity_GB: ") + v + "\n", 7, "npu.hbm_capacity_GB", {"expected a number"});
  }
  EXPECT_DOUBLE_EQ(parse("npu:\n  hbm_capacity_GB: 0\n").npu.hbm_capacity_GB, 0.0);
  NpuConfig n;
  n.hbm_capacity_GB = -1;
  EXPECT_EQ(validate(n), "npu.hbm_capacity_GB must be >= 0 (0: unknown)");
}

// The compute model's keys (docs/compute.md): an architecture it knows,
// and clocks with the sustained one at most the peak's.
TEST(NpuYamlErrors, ComputeModelKeys) {
  expect_error("npu:\n  arch: volta\n", 7, "npu.arch", {"no compute model for 'volta'", "hopper"});
  for (const char* v : {"0", "-5", "9223372036854775808"}) {
    expect_error(std::string("npu:\n  clock_MHz: {peak: 1830, sustained: ") + v + "}\n", 7, "npu.clock_MHz.sustained",
                 {"must be > 0 and <= 100000", std::string("got ") + v});
  }
  for (const char* v : {"nan", "1e400", "fast"}) {
    expect_error(std::string("npu:\n  clock_MHz: {peak: ") + v + ", sustained: 1000}\n", 7, "npu.clock_MHz.peak", {"expected a number"});
  }
  expect_error("npu:\n  clock_MHz: {peak: 1830, sustained: 1900}\n", 7, "npu.clock_MHz.sustained",
               {"must not exceed the peak's clock (1830 MHz), got 1900"});
  expect_error("npu:\n  clock_MHz: {peak: 1830}\n", 7, "npu.clock_MHz.sustained", {"missing"});
  const NpuConfig n = parse("npu:\n  arch: ampere\n  gpu: a100-sxm-80gb\n  clock_MHz: {peak: 1410, sustained: 1340}\n").npu;
  EXPECT_EQ(n.arch, "ampere");
  EXPECT_EQ(n.gpu, "a100-sxm-80gb");
  EXPECT_DOUBLE_EQ(n.sustained_clock_ratio(), 1340.0 / 1410.0);
}

// The GPU presets carry their datasheet capacities (sources in their comments).
TEST(NpuYaml, GpuPresetsKnowTheirHbmCapacity) {
  const auto capacity = [](const std::string& name) {
    api::PlatformRequest r;
    r.file = name;
    return api::load_platform(r).npu.hbm_capacity_GB;
  };
  EXPECT_DOUBLE_EQ(capacity("hgx-a100"), 80.0);
  EXPECT_DOUBLE_EQ(capacity("hgx-h100"), 80.0);
  EXPECT_DOUBLE_EQ(capacity("hgx-h200"), 141.0);
  EXPECT_DOUBLE_EQ(capacity("hgx-b200"), 180.0);
  EXPECT_DOUBLE_EQ(capacity("gb200-nvl72"), 186.0);
  EXPECT_DOUBLE_EQ(capacity("mi300x"), 192.0);
  EXPECT_DOUBLE_EQ(capacity("default"), 0.0);  // a V100/TPU-v3-class NPU of no one datasheet
}

TEST(NpuYamlErrors, FixedKernelTimesIsABoolean) {
  for (const char* v : {"1", "0", "maybe", "'yes please'"}) {
    expect_error(std::string("npu:\n  fixed_kernel_times: ") + v + "\n", 7, "npu.fixed_kernel_times",
                 {"expected true or false"});
  }
}

TEST(NpuYamlErrors, HbmBytesPerByteSent) {
  // all-reduce is derived (half reduce-scatter, half all-gather), not a key.
  expect_error("communication:\n  sm:\n    hbm_bytes_per_byte_sent: {all-reduce: 3.5}\n", 8,
               "communication.sm.hbm_bytes_per_byte_sent.all-reduce", {"unknown key", "reduce-scatter"});
  expect_error("communication:\n  sm:\n    hbm_bytes_per_byte_sent: {reduce-scater: 5}\n", 8,
               "communication.sm.hbm_bytes_per_byte_sent.reduce-scater",
               {"unknown key", "did you mean 'reduce-scatter'"});
  expect_error("communication:\n  sm:\n    hbm_bytes_per_byte_sent: {all-gather: -1}\n", 8,
               "communication.sm.hbm_bytes_per_byte_sent.all-gather", {"must be in 0..1000", "got -1"});
  expect_error("communication:\n  sm:\n    hbm_bytes_per_byte_sent: {all-to-all: 1001}\n", 8,
               "communication.sm.hbm_bytes_per_byte_sent.all-to-all", {"must be in 0..1000"});
  expect_error("communication:\n  sm:\n    hbm_bytes_per_byte_sent: {all-to-all: two}\n", 8,
               "communication.sm.hbm_bytes_per_byte_sent.all-to-all", {"expected a number"});
}

TEST(NpuYamlErrors, SectionsMustBeMaps) {
  expect_error("npu: 80\n", 6, "npu", {"expected a map"});
  expect_error("communication: sm\n", 6, "communication", {"expected a map"});
  expect_error("communication:\n  ace: big\n", 7, "communication.ace", {"expected a map"});
  expect_error("communication:\n  sm:\n    hbm_bytes_per_byte_sent: 3.5\n", 8,
               "communication.sm.hbm_bytes_per_byte_sent", {"expected a map"});
}

}  // namespace
}  // namespace acesim
