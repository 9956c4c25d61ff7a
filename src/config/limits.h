// Input limits, one place for every reader. Values past them are refused up
// front with a message: they are typos, or they would overflow int64
// picoseconds or exhaust memory (see docs/formats.md, "Limits").
#pragma once

#include <cstdint>

namespace acesim::limits {

inline constexpr long long kMaxNpusPerDimension = 1LL << 20;  // 1,048,576
inline constexpr long long kMaxNpus = 1LL << 24;              // 16,777,216
inline constexpr int kMaxDimensions = 16;
inline constexpr double kMinBandwidthGBps = 1e-6;  // 1 kB/s
inline constexpr double kMaxBandwidthGBps = 1e9;   // 1 EB/s
inline constexpr double kMaxDelayNs = 1e9;         // 1 s
inline constexpr long long kMaxLinksPerNeighbour = 1024;
inline constexpr long long kMaxChunks = 1'000'000;
inline constexpr long long kMaxActiveChunks = 1'000'000;
inline constexpr std::uint64_t kMaxCollectiveBytes = 1ULL << 50;  // 1 PiB
// An input file acesim reads whole (platforms, workloads, cluster, model,
// failure and grid files, kernel-times CSVs): larger is not an input file
// (read_text_file). Traces have their own caps (Chakra, Kineto).
inline constexpr std::uint64_t kMaxInputFileBytes = 64ULL << 20;  // 64 MiB
// Memory a run's work graphs may hold, over every rank built (StagedJob::estimated_bytes_per_rank).
inline constexpr double kMaxGraphBytes = 8.0 * (1ULL << 30);  // 8 GiB

}  // namespace acesim::limits
