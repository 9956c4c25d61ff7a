// NCCL's collectives as NCCL runs them: its algorithms (ring with several
// channels, double binary tree, NVLS in-switch reduction, NVLS-tree across
// nodes, CollNet's in-network reduction), its protocols
// (Simple, LL, LL128), and its cost model, which picks the pair with the
// least estimated time. The platform is seen as NCCL sees a cluster: a node
// domain (topology dimension 0) and at most one scale-out dimension (1).
// Every formula and constant, with its source: docs/model.md, "NCCL
// collectives".
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithm/collective_op.h"
#include "engine/time.h"
#include "topology/topology.h"

namespace acesim {

// kP2p: NCCL's all-to-all, grouped point-to-point sends to every peer
// (after the others: NCCL's tuning tables, indexed by them, have no row for
// it). kAllPairs: RCCL's MSCCL all-pairs all-reduce on one 8-GPU AMD node
// (a direct reduce-scatter, then a direct all-gather), which RCCL runs by
// size range, outside its cost model (docs/model.md, "RCCL on a mesh").
enum class NcclAlgo { kTree, kRing, kNvls, kNvlsTree, kCollNetDirect, kCollNetChain, kP2p, kAllPairs };
enum class NcclProto { kLL, kLL128, kSimple };
// The GPU generation whose rows of NCCL's tuning tables apply; kCdna3:
// AMD's MI300X and MI325X (gfx942), with RCCL's rows (its tuning model 5);
// kCdna4: AMD's MI350X and MI355X (gfx950), RCCL's tuning model 6, whose
// latency and bandwidth rows are model 5's, with twice the channels on one
// node.
enum class NcclArch { kAmpere, kHopper, kBlackwell, kCdna3, kCdna4 };

std::string_view to_string(NcclAlgo a);
std::string_view to_string(NcclProto p);
std::optional<NcclAlgo> parse_nccl_algo(std::string_view s);  // ring, tree, nvls, nvls-tree, collnet-direct, collnet-chain, p2p, allpairs
std::optional<NcclProto> parse_nccl_proto(std::string_view s);  // simple, ll, ll128
std::vector<std::string> nccl_algo_names();
std::vector<std::string> nccl_proto_names();
std::string_view to_string(NcclArch a);
std::optional<NcclArch> parse_nccl_arch(std::string_view s);  // ampere, hopper, blackwell, cdna3, cdna4
std::vector<std::string> nccl_arch_names();

// `collectives: {library: nccl, nccl: {...}}` in a platform file, or
// --library/--algo/--proto/--channels.
struct NcclSettings {
  bool enabled = false;
  std::optional<NcclAlgo> algo;    // nullopt: auto (NCCL's cost model)
  std::optional<NcclProto> proto;  // nullopt: auto
  int channels = 0;                // 0: NCCL's default for the algorithm
  NcclArch arch = NcclArch::kHopper;
};

// The part of a platform a collective spans, as NCCL's tuning sees it.
struct NcclView {
  int nranks = 1;
  int nnodes = 1;
  int ppn = 1;              // GPUs per node
  double intra_GBps = 0.0;  // per GPU, into the node's fabric (one direction)
  double inter_GBps = 0.0;  // per node, into the scale-out: all its GPUs' NICs (0 on one node)
  bool nvls = false;        // the node's switch reduces (DimensionSpec::nvls)
  double nvls_efficiency = 1.0;
  bool collnet = false;     // the scale-out's switches reduce (DimensionSpec::sharp)
  bool mesh = false;        // the node's GPUs are fully connected (AMD's xGMI)
  NcclArch arch = NcclArch::kHopper;
};

// Throws std::invalid_argument when the spanned dimensions are not a node
// domain (dimension 0) and a scale-out (dimension 1).
NcclView nccl_view(const Topology& topo, std::span<const int> dims);
NcclView nccl_view(const std::vector<DimensionSpec>& dims);

// Operations the model runs; others keep the platform's own plan.
bool nccl_models(CollectiveOp op);
// All-to-all runs as every pair's send, simulated pair by pair: up to this
// many ranks (4.2 M pairs, about 1.6 s and 400 MB); larger groups keep the
// platform's plan.
inline constexpr int kMaxP2pRanks = 2048;
// Whether the model runs `op` on the group `v` (nccl_models, and the p2p
// size limit).
bool nccl_runs(const NcclView& v, CollectiveOp op);
// Why NCCL cannot run `op` with `a` here (one line, saying what would
// work), or nullopt.
std::optional<std::string> nccl_unsupported(const NcclView& v, CollectiveOp op, NcclAlgo a);
// Channels NCCL opens for `a` when not told (docs/model.md).
int nccl_default_channels(const NcclView& v, NcclAlgo a);
// Bytes on the wire per byte of data: 1 / the protocol's payload share.
double nccl_wire_factor(NcclProto p);

// NCCL's estimate for one algorithm and protocol (microseconds, GB/s).
struct NcclCost {
  double latency_us = 0.0;
  double busbw_GBps = 0.0;  // NCCL's bus bandwidth after its protocol corrections
  double algbw_GBps = 0.0;  // what the time divides the bytes by
  double time_us = 0.0;     // latency_us + bytes / algbw
};
// nullopt when NCCL disables the pair (NVLS, NVLS-tree, CollNet without Simple, ...).
std::optional<NcclCost> nccl_cost(const NcclView& v, CollectiveOp op, double bytes, NcclAlgo a, NcclProto p,
                                  int channels);

// What runs: the pair chosen, its channels, and how the simulation lays it
// out: the pattern's bytes scaled by wire_factor, `step_ps` per pattern
// step and `base_ps` once.
struct NcclChoice {
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  int channels = 1;
  NcclCost cost;
  double wire_factor = 1.0;
  TimePs base_ps = 0;
  TimePs step_ps = 0;
  // NCCL's copy-engine path (NCCL 2.28, NCCL_CTA_POLICY_ZERO): algo p2p's
  // every-peer copies, moved by the copy engines with no kernel.
  bool copy_engine = false;
};
// Compute units its kernels hold: one per channel (a CTA), MSCCL's
// all-pairs one per thread block (8 a channel).
int nccl_kernel_units(const NcclChoice& c);
// The copy-engine all-gather or all-to-all NCCL 2.28 runs on one NVLink
// domain (ce_coll.cc: a barrier, one batch of copies to every peer, a
// barrier; no CTA): the direct copies, three engine operations of
// `barrier_ps` each in all (the executor's step latency pays two of them:
// the leading latency step's and the copies'). Nothing for other operations
// or across nodes (2.28 requires nNodes == 1). `issue_ps`: a host that
// issues each peer's copy as its own command, in series, pays it for every
// peer after the first (0: one batch, as NCCL).
std::optional<NcclChoice> nccl_copy_engine_choice(const NcclView& v, CollectiveOp op, TimePs barrier_ps,
                                                  TimePs issue_ps = 0);

// The pair NCCL's cost model picks among those `s` allows (or the forced
// one). Throws std::invalid_argument (one line) when nothing can run.
NcclChoice nccl_choose(const NcclView& v, CollectiveOp op, double bytes, const NcclSettings& s);
// The settings that apply to `op`: NCCL_ALGO (but p2p) and LL128 do not
// apply to point-to-point sends, so all-to-all runs without them.
NcclSettings nccl_applied(const NcclSettings& s, CollectiveOp op);

// Why the NCCL model cannot run symmetrically (one rank for all) on
// `dims`, or an empty string.
std::string nccl_asymmetry(const NcclSettings& s, const std::vector<DimensionSpec>& dims);

}  // namespace acesim
