#include "collective/nccl_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "algorithm/pattern.h"
#include "registry/registry.h"

namespace acesim {
namespace {

// Indices [algo][proto]: algo Tree, Ring, NVLS, NVLS-tree, CollNetDirect,
// CollNetChain; proto LL, LL128, Simple. NCCL 2.23+ src/graph/tuning.cc
// (docs/model.md, "NCCL collectives").
using Table = std::array<std::array<double, 3>, 6>;
constexpr Table kBaseLatUs = {
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}}};
constexpr Table kNvlinkHopUs = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0.0, 0.0, 25.0}, {0.0, 0.0, 25.0}, {0.0, 0.0, 3.7}, {0.0, 0.0, 2.8}}};
constexpr Table kNetHopUs = {
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}, {0.0, 0.0, 18.0}, {0.0, 0.0, 14.0}, {0.0, 0.0, 31.0}, {0.0, 0.0, 30.0}}};
constexpr double kCollNetArityUs = 0.4;  // CollNetDirect's serialization per GPU of the node
constexpr std::array<NcclAlgo, 8> kAlgos = {NcclAlgo::kTree,          NcclAlgo::kRing,         NcclAlgo::kNvls,
                                            NcclAlgo::kNvlsTree,      NcclAlgo::kCollNetDirect, NcclAlgo::kCollNetChain,
                                            NcclAlgo::kP2p,           NcclAlgo::kAllPairs};
// RCCL's rows for gfx942 (its tuning model 5; ROCm/rccl src/graph/tuning.cc):
// base latencies and per-hop xGMI latencies of tree and ring, and the
// bandwidth ratio it applies per protocol (in place of NCCL's caps, which
// AMD builds compile out). Across nodes NCCL's network rows stay (RCCL's
// ring Simple row, 320 us a hop, is left out: docs/model.md).
constexpr std::array<std::array<double, 3>, 2> kRcclBaseLatUs = {{{12.0, 12.0, 17.0}, {12.0, 12.0, 17.0}}};
constexpr std::array<std::array<double, 3>, 2> kRcclXgmiHopUs = {{{0.9, 0.9, 2.3}, {0.8, 0.8, 2.1}}};
constexpr std::array<std::array<double, 3>, 2> kRcclBwRatio = {{{0.06, 0.06, 0.11}, {0.08, 0.08, 1.0}}};
// MSCCL's all-pairs all-reduce on 8 x MI300X (ROCm/rccl
// tools/msccl-algorithms: allreduce-allpairs-8n-ll-32tb (4 channels) and
// allreduce-allpairs-8n-simple (8 channels, 512 KiB to 20 MiB); each channel
// runs a thread block per peer and one that reduces: 8 per channel). RCCL
// runs it by size, LL below 512 KiB. Calibration constants, per protocol
// (LL, -, Simple), from AMD's 8 x MI300X all_reduce_perf table (ROCm blog
// "mi300x-rccl-xgmi", RCCL 2.22.3) on the mi300x preset: the fixed latency
// that makes the 1 KiB (LL) and 1 MiB (Simple) rows exact, and the bytes
// the xGMI links carry per byte of data (LL's flags and the steps'
// chunk-by-chunk synchronisation, which acesim does not simulate one chunk
// at a time) that gives the table's rise from 1 to 256 KiB (LL) and from 1
// to 16 MiB (Simple). Every other row tests them (docs/validation.md,
// section 2).
constexpr double kAllPairsSimpleMinBytes = 524288.0;
constexpr double kAllPairsMaxBytes = 20971520.0;
constexpr std::array<double, 3> kAllPairsLatencyUs = {12.1, 0.0, 18.33};
constexpr std::array<double, 3> kAllPairsWireFactor = {2.68, 1.0, 1.436};
constexpr int kAllPairsRanks = 8;
constexpr int kAllPairsBlocksPerChannel = 8;
// RCCL's point-to-point kernels (its all-to-all) move a byte at 1 / 1.1277
// of the rate its rings reach on the same xGMI links: a calibration
// constant, the ratio of 8 x MI355X's all_reduce to its alltoall bus
// bandwidth at 8 GiB on one node (406.76 / 360.71 GB/s, Oracle Cloud's
// rccl-tests run, RCCL 2.26.6: tests/data/nccl-tests), counted as bytes
// on the wire as all-pairs' factors are. The other MI355X all-to-all tables
// (one, two and four nodes) test it (docs/validation.md, section 2).
constexpr double kRcclP2pWireFactor = 406.76 / 360.71;
constexpr double kNetOverheadUs = 1.0;  // NCCL_NET_OVERHEAD default on non-AMD hosts
// Per-architecture caps (GB/s), indexed by nodes 1 / 2 / more: llMaxBws,
// perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws.
struct ArchCaps {
  std::array<double, 3> ll_max;
  double ring_ll128_per_ch;
  std::array<double, 3> tree_ll128_per_ch;
  std::array<double, 3> tree_per_ch;
};
constexpr std::array<ArchCaps, 5> kArchCaps = {{
    {{87.7, 22.5, 19.0}, 20.0, {20.0, 20.0, 20.0}, {24.0, 23.6, 17.8}},  // Ampere
    {{141.0, 45.0, 35.0}, 36.7, {36.7, 36.7, 29.0}, {38.7, 41.4, 36.0}},  // Hopper
    {{282.0, 90.0, 70.0}, 73.4, {73.4, 73.4, 58.0}, {77.4, 82.8, 72.0}},  // Blackwell
    {{1e9, 1e9, 1e9}, 1e9, {1e9, 1e9, 1e9}, {1e9, 1e9, 1e9}},  // CDNA3: none (RCCL compiles them out)
    {{1e9, 1e9, 1e9}, 1e9, {1e9, 1e9, 1e9}, {1e9, 1e9, 1e9}},  // CDNA4: none
}};
// treeCorrectionFactor[proto][log2(bytes / 64)], 64 B .. 256 MiB.
constexpr std::array<std::array<double, 23>, 3> kTreeCorrection = {{
    {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1},
    {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

int idx(NcclAlgo a) { return static_cast<int>(a); }
// RCCL's rows: tuning model 6 (gfx950) has model 5's (gfx942) hwLat and
// bwRatio rows (ROCm/rccl src/graph/tuning.cc).
bool rccl(const NcclView& v) { return v.arch == NcclArch::kCdna3 || v.arch == NcclArch::kCdna4; }
// RCCL's row index (tree 0, ring 1) for the algorithms it has rows for.
int rccl_row(NcclAlgo a) { return a == NcclAlgo::kTree ? 0 : 1; }
// RCCL on one gfx942 node leaves LL128 off (its topology preset does not
// enable it); RCCL 2.26.6 enabled it on gfx950 (ROCm/rccl release notes for
// ROCm 7.0.0, "Enabled LL128 protocol on gfx950").
bool rccl_ll128_off(const NcclView& v) { return v.arch == NcclArch::kCdna3 && v.nnodes == 1; }
// NVLS, NVLS-tree and CollNet run NCCL's Simple protocol only.
bool simple_only(NcclAlgo a) {
  return a == NcclAlgo::kNvls || a == NcclAlgo::kNvlsTree || a == NcclAlgo::kCollNetDirect ||
         a == NcclAlgo::kCollNetChain;
}
int idx(NcclProto p) { return static_cast<int>(p); }
int node_class(int nnodes) { return nnodes <= 1 ? 0 : nnodes == 2 ? 1 : 2; }
int log2i(double x) { return x < 1.0 ? 0 : static_cast<int>(std::floor(std::log2(x))); }

// Per-GPU bandwidth into a dimension's fabric, one direction.
double gpu_bandwidth(const DimensionSpec& d) {
  const double link = d.bandwidth_GBps * d.links_per_neighbour;
  if (d.kind == DimKind::kRing) return 2.0 * link;  // channels use both directions
  if (d.kind == DimKind::kFullyConnected) return link * (d.npus - 1);
  return link;  // a switch (or any fabric with one port per GPU)
}

// The ring's hop latency inside a node; across nodes at least the network
// overhead NCCL adds per step (three times for Simple).
double ring_hop_us(const NcclView& v, NcclProto p) {
  const double hop = rccl(v) ? kRcclXgmiHopUs[1][idx(p)] : kNvlinkHopUs[idx(NcclAlgo::kRing)][idx(p)];
  return v.nnodes > 1 ? std::max(hop, kNetOverheadUs * (p == NcclProto::kSimple ? 3.0 : 1.0)) : hop;
}

// NCCL's tuning has no latency for point-to-point operations; a send costs
// what one ring step does: the ring's base latency and one hop (NVLink, or
// the network across nodes).
double p2p_latency_us(const NcclView& v, NcclProto p) {
  const int ring = idx(NcclAlgo::kRing);
  return kBaseLatUs[ring][idx(p)] + (v.nnodes > 1 ? kNetHopUs[ring][idx(p)] : kNvlinkHopUs[ring][idx(p)]);
}

// NVLS moves its data in chunks that NCCL shrinks for smaller messages
// (enqueue.cc; ops = channels x NVLS heads, a head per GPU of the node).
// NVLS: 128 KiB (nvlsChunkSize), 64 KiB below 64 x ops x 128 KiB, 32 KiB
// below 8 x ops x 64 KiB, 16 KiB below 2 x ops x 32 KiB. NVLS-tree: 128 KiB
// (64 KiB from 4 nodes), 64 KiB below 4 x ops x 128 KiB, 32 KiB below
// ops x 64 KiB.
double nvls_chunk_bytes(NcclAlgo a, double bytes, double ops, int nnodes) {
  if (a == NcclAlgo::kNvlsTree) {
    double c = nnodes >= 4 ? 65536.0 : 131072.0;
    if (bytes < 4.0 * ops * c && c > 65536.0) c = 65536.0;
    if (bytes < ops * c && c > 32768.0) c = 32768.0;
    return c;
  }
  double c = 131072.0;
  if (bytes < 64.0 * ops * c) c = 65536.0;
  if (bytes < 8.0 * ops * c) c = 32768.0;
  if (bytes < 2.0 * ops * c) c = 16384.0;
  return c;
}

// NVLS's kernel (NCCL src/device/all_reduce.h, RunWorkElement for
// NCCL_ALGO_NVLS / NVLS_TREE, without registered user buffers) is a
// pipeline of warp groups that hand each chunk on: on one node scatter (the
// user's input into the NVLS buffer), reduce (multimem.ld_reduce, then
// multimem.st to every GPU) and gather (the buffer into the user's output):
// 3 stages; NVLS-tree splits the reduce into a reduce that sends to the
// network and a broadcast that receives from it: 4 stages, two of them
// synchronising through the switch. A channel loops over the data
// channels x heads x chunk bytes at a time (loopSize); every iteration moves
// its bytes and waits for the switch's synchronisation once per such stage.
constexpr int kNvlsStages = 3;
constexpr int kNvlsTreeStages = 4;

// Calibration constant: the synchronisation every NVLS iteration waits for,
// stated at NCCL's own efficiency (below). Set once from NVIDIA's DGX H100
// sample (dgxc-benchmarking, nccl-tests all_reduce, 2 MiB to 16 GiB): the
// value that makes the pipeline's geomean error over the sample's NVLS sizes
// least (2.0%); docs/model.md, "NCCL collectives".
constexpr double kNvlsChunkSyncUs = 7.47;

// The rate the shape moves NVLS's bytes at: every switch port carries
// (n+1)/n of them, held 1/e as long (e = NCCL's efficiency).
double nvls_rate_GBps(const NcclView& v) { return v.nvls_efficiency * v.intra_GBps * v.ppn / (v.ppn + 1.0); }

// NVLS-tree's NIC time for `bytes`: a NIC carries S / ppn each way on two
// nodes, twice that beyond (a node inner in one of the two trees).
double nvls_tree_nic_us(const NcclView& v, double bytes) {
  return v.inter_GBps > 0.0 ? (v.nnodes <= 2 ? 1.0 : 2.0) * bytes / (1e3 * v.inter_GBps) : 0.0;
}

// The time NVLS's pipeline takes for `bytes`: (iterations + stages - 1) x
// the time of one stage-iteration (the first chunk crosses every stage
// before the last one starts; the stages move the same bytes). NCCL's
// efficiency e is its large-message figure, at the largest chunk (128 KiB),
// where one synchronisation per iteration is already inside it: the
// switch's own rate is the efficiency's rate x (1 + k/128 KiB), k = the bytes
// one head's share of that rate moves in the synchronisation time, and a
// synchronisation costs kNvlsChunkSyncUs / (1 + k/128 KiB) at that rate. A
// message shorter than one loop runs one iteration on fewer channels.
// NVLS-tree's iteration is bound by the slower of the switch and the NIC
// and waits for both of its switch synchronisations.
double nvls_pipeline_us(const NcclView& v, NcclAlgo a, double bytes, int channels) {
  const bool tree = a == NcclAlgo::kNvlsTree;
  const double ops = static_cast<double>(channels) * v.ppn;
  const double rate_GBps = nvls_rate_GBps(v);
  const double norm = 1.0 + kNvlsChunkSyncUs * 1e3 * rate_GBps / (ops * 131072.0);
  const double c = nvls_chunk_bytes(a, bytes, ops, v.nnodes);
  const double loop_bytes = std::min(bytes, ops * c);
  double move_us = loop_bytes / (1e3 * rate_GBps * norm);
  if (tree) move_us = std::max(move_us, nvls_tree_nic_us(v, loop_bytes));
  const double stage_us = move_us + (tree ? 2.0 : 1.0) * kNvlsChunkSyncUs / norm;
  const double iterations = std::max(1.0, bytes / (ops * c));
  return (iterations + (tree ? kNvlsTreeStages : kNvlsStages) - 1) * stage_us;
}

// What the simulated links do not already take of that pipeline: the
// shape moves the bytes at the efficiency's rate on the switch (and the
// tree's share on the NICs), so the rest is charged once as latency.
double nvls_pipeline_extra_us(const NcclView& v, NcclAlgo a, double bytes, int channels) {
  double links_us = bytes / (1e3 * nvls_rate_GBps(v));
  if (a == NcclAlgo::kNvlsTree) links_us = std::max(links_us, nvls_tree_nic_us(v, bytes));
  return std::max(0.0, nvls_pipeline_us(v, a, bytes, channels) - links_us);
}

// NCCL sends a peer's data with LL up to NCCL_P2P_LL_THRESHOLD (16384
// bytes, enqueue.cc), with Simple above; no cost model decides.
constexpr double kP2pLLThresholdBytes = 16384.0;
NcclProto p2p_protocol(const NcclView& v, double bytes) {
  return bytes / v.nranks <= kP2pLLThresholdBytes ? NcclProto::kLL : NcclProto::kSimple;
}

double latency_us(const NcclView& v, CollectiveOp op, NcclAlgo a, NcclProto p, double bytes, int channels) {
  if (a == NcclAlgo::kP2p) return p2p_latency_us(v, p);
  if (a == NcclAlgo::kAllPairs) return kAllPairsLatencyUs[idx(p)];
  const bool amd = rccl(v) && (a == NcclAlgo::kTree || a == NcclAlgo::kRing);
  const double base = amd ? kRcclBaseLatUs[rccl_row(a)][idx(p)] : kBaseLatUs[idx(a)][idx(p)];
  const double intra = a == NcclAlgo::kRing ? ring_hop_us(v, p)
                       : amd                ? kRcclXgmiHopUs[rccl_row(a)][idx(p)]
                                            : kNvlinkHopUs[idx(a)][idx(p)];
  const NcclAlgo net_row = (v.ppn == 1 && a == NcclAlgo::kRing) ? NcclAlgo::kTree : a;
  const double inter = kNetHopUs[idx(net_row)][idx(p)];
  switch (a) {
    case NcclAlgo::kRing: {
      const int nsteps = op == CollectiveOp::kAllReduce ? 2 * (v.nranks - 1) : v.nranks - 1;
      int inter_steps = 0;
      if (v.nnodes > 1) inter_steps = op == CollectiveOp::kAllReduce ? 2 * (v.nnodes - 1) : v.nnodes - 1;
      double lat = base + (nsteps - inter_steps) * intra + inter_steps * inter;
      // The "plateau" factor NCCL applies to multi-node Simple ring all-reduce.
      if (op == CollectiveOp::kAllReduce && p == NcclProto::kSimple && v.nnodes > 1 &&
          bytes / (static_cast<double>(channels) * v.nranks) >= 64.0) {
        lat *= 1.4;
      }
      return lat;
    }
    case NcclAlgo::kTree: return base + 2.0 * ((v.ppn - 1) * intra + log2i(v.nnodes) * inter);
    case NcclAlgo::kNvls: return intra + (v.nnodes > 1 ? inter : 0.0);
    case NcclAlgo::kNvlsTree: return base + intra + 2.0 * log2i(v.nnodes) * inter;
    case NcclAlgo::kCollNetDirect:
      return base + 2.0 * (std::min(1, v.ppn - 1) * intra + (v.ppn - 1) * kCollNetArityUs) + inter;
    case NcclAlgo::kCollNetChain: return base + 2.0 * (v.ppn - 1) * intra + inter;
    case NcclAlgo::kP2p:
    case NcclAlgo::kAllPairs: break;
  }
  return base;
}

// NCCL's bus bandwidth for the pair, after its protocol corrections.
double bus_bandwidth(const NcclView& v, NcclAlgo a, NcclProto p, int channels) {
  const int nc = node_class(v.nnodes);
  const ArchCaps& caps = kArchCaps[static_cast<std::size_t>(v.arch)];
  double bw = v.nnodes > 1 ? std::min(v.intra_GBps, v.inter_GBps) : v.intra_GBps;
  // RCCL: its ratio per protocol for tree and ring; all-pairs at the
  // links' rate over its wire factor, p2p as NCCL's.
  if (rccl(v)) {
    if (a == NcclAlgo::kTree || a == NcclAlgo::kRing) return bw * kRcclBwRatio[rccl_row(a)][idx(p)];
    if (a == NcclAlgo::kAllPairs) return bw / kAllPairsWireFactor[idx(p)];
    return (p == NcclProto::kLL ? bw * 0.5 : bw) / kRcclP2pWireFactor;
  }
  if (a == NcclAlgo::kRing && p == NcclProto::kLL) bw = std::min(caps.ll_max[nc], bw * 0.5);
  if (a == NcclAlgo::kRing && p == NcclProto::kLL128) bw = std::min(bw * 0.92, channels * caps.ring_ll128_per_ch);
  if (a == NcclAlgo::kTree) {
    bw = std::min(bw * 0.92, channels * caps.tree_per_ch[nc]);
    if (p == NcclProto::kLL) bw = std::min(bw / 3.8, caps.ll_max[nc]);
    if (p == NcclProto::kLL128) bw = std::min(bw * (v.nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), channels * caps.tree_ll128_per_ch[nc]);
    bw *= 0.85;  // NCCL's factor for its TREE pattern; acesim does not run NCCL's topology search
  }
  if (a == NcclAlgo::kNvls) bw *= v.nvls_efficiency;
  if (a == NcclAlgo::kP2p && p == NcclProto::kLL) bw *= 0.5;  // half of an LL line is flags
  // The switch's efficiency slows the NVLink half; beyond two nodes every
  // NIC carries two trees' worth (a node inner in one tree, a leaf in the
  // other), so the network counts half.
  if (a == NcclAlgo::kNvlsTree) {
    bw = std::min(v.intra_GBps * v.nvls_efficiency, v.nnodes <= 2 ? v.inter_GBps : v.inter_GBps / 2.0);
  }
  // CollNetDirect: every GPU a head with its own NIC (NCCL's GPU/NIC ratio
  // factor is 1), x0.85 on Hopper and later.
  if (a == NcclAlgo::kCollNetDirect && v.arch != NcclArch::kAmpere) bw *= 0.85;
  return bw;
}

// Bus bandwidth -> the bandwidth NCCL divides the bytes by.
double algbw_ratio(const NcclView& v, CollectiveOp op, NcclAlgo a) {
  switch (a) {
    case NcclAlgo::kRing: {
      const double nsteps = op == CollectiveOp::kAllReduce ? 2.0 * (v.nranks - 1) : v.nranks - 1.0;
      return v.nranks / nsteps;
    }
    case NcclAlgo::kTree:
    case NcclAlgo::kCollNetDirect:
    case NcclAlgo::kCollNetChain: return 0.5;
    case NcclAlgo::kNvls:
    case NcclAlgo::kNvlsTree: return 5.0 / 6.0;
    case NcclAlgo::kP2p: return v.nranks / (v.nranks - 1.0);  // a rank sends (n-1)/n of its data
    case NcclAlgo::kAllPairs: return v.nranks / (2.0 * (v.nranks - 1));  // 2(n-1)/n of the data, once each
  }
  return 1.0;
}

}  // namespace

std::string_view to_string(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::kTree: return "tree";
    case NcclAlgo::kRing: return "ring";
    case NcclAlgo::kNvls: return "nvls";
    case NcclAlgo::kNvlsTree: return "nvls-tree";
    case NcclAlgo::kCollNetDirect: return "collnet-direct";
    case NcclAlgo::kCollNetChain: return "collnet-chain";
    case NcclAlgo::kP2p: return "p2p";
    case NcclAlgo::kAllPairs: return "allpairs";
  }
  return "?";
}

std::string_view to_string(NcclProto p) {
  switch (p) {
    case NcclProto::kLL: return "ll";
    case NcclProto::kLL128: return "ll128";
    case NcclProto::kSimple: return "simple";
  }
  return "?";
}

namespace {

// The value among `all` whose name matches `s` (case and separators aside).
template <typename E, std::size_t N>
std::optional<E> parse_named(std::string_view s, const std::array<E, N>& all) {
  for (E e : all) {
    if (normalize_name(s) == normalize_name(to_string(e))) return e;
  }
  return std::nullopt;
}

}  // namespace

std::optional<NcclAlgo> parse_nccl_algo(std::string_view s) { return parse_named(s, kAlgos); }

std::optional<NcclProto> parse_nccl_proto(std::string_view s) {
  return parse_named(s, std::array{NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple});
}

std::string_view to_string(NcclArch a) {
  switch (a) {
    case NcclArch::kAmpere: return "ampere";
    case NcclArch::kHopper: return "hopper";
    case NcclArch::kBlackwell: return "blackwell";
    case NcclArch::kCdna3: return "cdna3";
    case NcclArch::kCdna4: return "cdna4";
  }
  return "?";
}

std::optional<NcclArch> parse_nccl_arch(std::string_view s) {
  return parse_named(s, std::array{NcclArch::kAmpere, NcclArch::kHopper, NcclArch::kBlackwell, NcclArch::kCdna3,
                                   NcclArch::kCdna4});
}

std::vector<std::string> nccl_arch_names() { return {"ampere", "hopper", "blackwell", "cdna3", "cdna4"}; }

std::vector<std::string> nccl_algo_names() {
  return {"auto", "ring", "tree", "nvls", "nvls-tree", "collnet-direct", "collnet-chain", "p2p", "allpairs"};
}
std::vector<std::string> nccl_proto_names() { return {"auto", "simple", "ll", "ll128"}; }

NcclView nccl_view(const Topology& topo, std::span<const int> dims) {
  std::vector<DimensionSpec> spanned;
  for (int d = 0; d < topo.num_dims(); ++d) {
    DimensionSpec s = topo.dim(d);
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) s.npus = 1;
    spanned.push_back(s);
  }
  return nccl_view(spanned);
}

NcclView nccl_view(const std::vector<DimensionSpec>& dims) {
  for (std::size_t d = 2; d < dims.size(); ++d) {
    if (dims[d].npus > 1) {
      throw std::invalid_argument("the NCCL model sees a node (dimension 0) and a scale-out (dimension 1); dimension " +
                                  std::to_string(d) + " spans " + std::to_string(dims[d].npus) + " NPUs");
    }
  }
  NcclView v;
  if (!dims.empty() && dims[0].npus > 1) {
    v.ppn = dims[0].npus;
    v.intra_GBps = gpu_bandwidth(dims[0]);
    v.nvls = dims[0].nvls && dims[0].kind == DimKind::kSwitch;
    v.nvls_efficiency = dims[0].nvls_efficiency;
    v.mesh = dims[0].kind == DimKind::kFullyConnected;
  }
  if (dims.size() > 1 && dims[1].npus > 1) {
    v.nnodes = dims[1].npus;
    v.inter_GBps = v.ppn * gpu_bandwidth(dims[1]);
    v.collnet = dims[1].sharp;
    if (v.ppn == 1) v.intra_GBps = v.inter_GBps;  // one GPU per node: nothing inside
  }
  v.nranks = v.ppn * v.nnodes;
  return v;
}

bool nccl_models(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather ||
         op == CollectiveOp::kAllToAll;
}

namespace {

// Why NCCL's model cannot run op with algorithm a. With `text` false the
// reason is left empty: nccl_cost asks for every candidate of every choice.
std::optional<std::string> unsupported(const NcclView& v, CollectiveOp op, NcclAlgo a, bool text) {
  const auto why = [&](auto&& reason) -> std::string {
    return text ? std::string(to_string(a)) + " " + std::string(to_string(op)) + reason() : std::string();
  };
  if (!nccl_models(op)) return why([&] { return std::string(": the NCCL model runs all-reduce, reduce-scatter, all-gather and all-to-all"); });
  if (op == CollectiveOp::kAllToAll) {
    if (a != NcclAlgo::kP2p) return why([&] { return std::string(": NCCL runs all-to-all as point-to-point sends; use p2p or auto"); });
    if (v.nranks > kMaxP2pRanks) {
      return why([&] { return std::string(": " + std::to_string(v.nranks) + " ranks have too many pairs to simulate one by one (at most " +
             std::to_string(kMaxP2pRanks) + "); use --library acesim"); });
    }
    return std::nullopt;
  }
  if (a == NcclAlgo::kP2p) return why([&] { return std::string(": p2p runs all-to-all only; use ring or auto"); });
  if (a == NcclAlgo::kAllPairs) {
    if (op != CollectiveOp::kAllReduce) return why([&] { return std::string(": RCCL's all-pairs runs all-reduce only; use ring"); });
    if (v.arch != NcclArch::kCdna3 || !v.mesh || v.nnodes != 1 || v.nranks != kAllPairsRanks) {
      return why([&] { return std::string(": RCCL's MSCCL all-pairs runs on one fully connected node of 8 AMD GPUs (gpu_arch cdna3); use ring"); });
    }
  }
  if (a == NcclAlgo::kTree && op != CollectiveOp::kAllReduce) return why([&] { return std::string(": NCCL's tree runs all-reduce only; use ring"); });
  if (a == NcclAlgo::kNvls) {
    if (!v.nvls) {
      return why([&] { return std::string(": needs an NVSwitch node domain marked `nvls: true` (dimension 0, kind switch); use ring or tree"); });
    }
    if (op != CollectiveOp::kAllReduce) return why([&] { return std::string(": NVLS is modelled for all-reduce only; use ring"); });
    if (v.nnodes > 1) {
      return why([&] { return std::string(": NVLS across nodes needs CollNet, which is not modelled; use nvls-tree, ring or tree"); });
    }
  }
  if (a == NcclAlgo::kNvlsTree) {
    if (!v.nvls) {
      return why([&] { return std::string(": needs an NVSwitch node domain marked `nvls: true` (dimension 0, kind switch); use ring or tree"); });
    }
    if (op != CollectiveOp::kAllReduce) return why([&] { return std::string(": NCCL's NVLS-tree runs all-reduce only; use ring"); });
    if (v.nnodes < 2) return why([&] { return std::string(": NCCL disables NVLS-tree on one node; use nvls"); });
  }
  if (a == NcclAlgo::kCollNetDirect || a == NcclAlgo::kCollNetChain) {
    if (v.nnodes < 2) return why([&] { return std::string(": CollNet reduces in the network, across nodes; use ring, tree or nvls"); });
    if (!v.collnet) {
      return why([&] { return std::string(": needs a scale-out marked `sharp: true` (dimension 1, kind switch or rail); use ring or tree"); });
    }
    if (op != CollectiveOp::kAllReduce) return why([&] { return std::string(": CollNet is modelled for all-reduce only; use ring"); });
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> nccl_unsupported(const NcclView& v, CollectiveOp op, NcclAlgo a) {
  return unsupported(v, op, a, true);
}

int nccl_default_channels(const NcclView& v, NcclAlgo a) {
  // RCCL on one MI300X node: 56 channels (rome_model_79's 28 rings,
  // doubled; ROCm/rccl src/graph); on gfx950 twice as many
  // (RCCL_MI3XX_MAX_SINGLE_NODE_CHANNELS x 2, src/graph/connect.cc: 112);
  // MSCCL's all-pairs its XMLs' 8 (4 for LL, which nccl_choose sets).
  if (a == NcclAlgo::kAllPairs) return 8;
  if (rccl(v) && v.nnodes == 1) return v.arch == NcclArch::kCdna4 ? 112 : 56;
  // Observed on 8x H100 (nccl-tests#309 logs): ring 24 channels, NVLS 16;
  // NVLS-tree runs on NVLS's channels; CollNet, for want of a published
  // figure, on the ring's. Across nodes, rounded up to a multiple of the
  // GPUs per node, so that every NIC carries as many.
  const int c = a == NcclAlgo::kNvls || a == NcclAlgo::kNvlsTree ? 16 : 24;
  return v.nnodes > 1 ? (c + v.ppn - 1) / v.ppn * v.ppn : c;
}

double nccl_wire_factor(NcclProto p) {
  switch (p) {
    case NcclProto::kLL: return 2.0;             // 8-byte data + 8-byte flags per 16-byte line
    case NcclProto::kLL128: return 128.0 / 120.0;  // 120 data bytes per 128-byte line
    case NcclProto::kSimple: return 1.0;
  }
  return 1.0;
}

std::optional<NcclCost> nccl_cost(const NcclView& v, CollectiveOp op, double bytes, NcclAlgo a, NcclProto p,
                                  int channels) {
  if (unsupported(v, op, a, false) || v.nranks < 2) return std::nullopt;
  if (simple_only(a) && p != NcclProto::kSimple) return std::nullopt;
  if (a == NcclAlgo::kP2p && p == NcclProto::kLL128) return std::nullopt;  // p2p runs LL or Simple
  if (a == NcclAlgo::kAllPairs && p == NcclProto::kLL128) return std::nullopt;  // MSCCL's XMLs: LL or Simple
  // RCCL: LL128 where it enables it; on one node tree with Simple skipped
  // (tuning.cc).
  if (rccl_ll128_off(v) && p == NcclProto::kLL128) return std::nullopt;
  if (rccl(v) && v.nnodes == 1 && a == NcclAlgo::kTree && p == NcclProto::kSimple) return std::nullopt;
  NcclCost c;
  c.latency_us = latency_us(v, op, a, p, bytes, channels);
  c.busbw_GBps = bus_bandwidth(v, a, p, channels);
  c.algbw_GBps = c.busbw_GBps * algbw_ratio(v, op, a);
  if (a == NcclAlgo::kTree) {
    const int i = std::clamp(log2i(bytes / 64.0), 0, 22);
    c.algbw_GBps *= kTreeCorrection[idx(p)][i];
  }
  if (!(c.algbw_GBps > 0.0)) return std::nullopt;
  c.time_us = c.latency_us + bytes / (1000.0 * c.algbw_GBps);
  return c;
}

bool nccl_runs(const NcclView& v, CollectiveOp op) {
  return nccl_models(op) && (op != CollectiveOp::kAllToAll || v.nranks <= kMaxP2pRanks);
}

NcclSettings nccl_applied(const NcclSettings& s, CollectiveOp op) {
  NcclSettings a = s;
  if (op == CollectiveOp::kAllToAll && a.algo != NcclAlgo::kP2p) a.algo.reset();
  if (op == CollectiveOp::kAllToAll && a.proto == NcclProto::kLL128) a.proto.reset();
  return a;
}

NcclChoice nccl_choose(const NcclView& view, CollectiveOp op, double bytes, const NcclSettings& settings) {
  NcclView v = view;
  v.arch = settings.arch;
  // A platform's forced algorithm or protocol that does not apply to the
  // operation leaves it as NCCL runs it.
  const NcclSettings s = nccl_applied(settings, op);
  const NcclAlgo no_algo = static_cast<NcclAlgo>(-1);
  const NcclProto no_proto = static_cast<NcclProto>(-1);
  const NcclAlgo forced_algo = s.algo.value_or(no_algo);
  const NcclProto forced_proto = s.proto.value_or(no_proto);
  if (forced_algo != no_algo) {
    if (auto why = nccl_unsupported(v, op, forced_algo)) throw std::invalid_argument(*why);
  }
  if (forced_algo != no_algo && simple_only(forced_algo) && forced_proto != no_proto &&
      forced_proto != NcclProto::kSimple) {
    throw std::invalid_argument(std::string(to_string(forced_algo)) +
                                " runs the simple protocol only; use --proto simple or auto");
  }
  if (forced_proto == NcclProto::kLL128 && rccl_ll128_off(v)) {
    throw std::invalid_argument("RCCL runs no ll128 on one gfx942 node (gpu_arch cdna3: its topology preset leaves it off); "
                                "use --proto ll, simple or auto");
  }
  NcclChoice best;
  double best_time = std::numeric_limits<double>::infinity();
  // RCCL runs MSCCL's all-pairs by size range, before its cost model: LL
  // on 4 channels below 512 KiB, Simple on 8 up to 20 MiB.
  const bool allpairs_auto = forced_algo == no_algo && !unsupported(v, op, NcclAlgo::kAllPairs, false) &&
                             bytes <= kAllPairsMaxBytes;
  if (forced_algo == NcclAlgo::kAllPairs || allpairs_auto) {
    const NcclProto p = forced_proto != no_proto ? forced_proto
                        : bytes < kAllPairsSimpleMinBytes ? NcclProto::kLL
                                                          : NcclProto::kSimple;
    const int channels = s.channels > 0 ? s.channels : p == NcclProto::kLL ? 4 : 8;
    if (const std::optional<NcclCost> c = nccl_cost(v, op, bytes, NcclAlgo::kAllPairs, p, channels)) {
      best.algo = NcclAlgo::kAllPairs;
      best.proto = p;
      best.channels = channels;
      best.cost = *c;
      best_time = c->time_us;
    }
  }
  for (NcclAlgo a : kAlgos) {
    if (allpairs_auto && std::isfinite(best_time)) break;
    if (a == NcclAlgo::kAllPairs) continue;
    if (forced_algo != no_algo && forced_algo != a) continue;
    const int channels = s.channels > 0 ? s.channels : nccl_default_channels(v, a);
    for (NcclProto p : {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple}) {
      if (forced_proto != no_proto && forced_proto != p) continue;
      if (a == NcclAlgo::kP2p && forced_proto == no_proto && p != p2p_protocol(v, bytes)) continue;
      const std::optional<NcclCost> c = nccl_cost(v, op, bytes, a, p, channels);
      if (!c || c->time_us >= best_time) continue;
      best_time = c->time_us;
      best.algo = a;
      best.proto = p;
      best.channels = channels;
      best.cost = *c;
    }
  }
  if (!std::isfinite(best_time)) {
    throw std::invalid_argument("the NCCL model has no algorithm for " + std::string(to_string(op)) + " on " +
                                std::to_string(v.nranks) + " ranks; use ring with a modelled operation");
  }
  best.wire_factor = best.algo == NcclAlgo::kAllPairs ? kAllPairsWireFactor[idx(best.proto)] : nccl_wire_factor(best.proto);
  if (rccl(v) && best.algo == NcclAlgo::kP2p) best.wire_factor *= kRcclP2pWireFactor;
  // The ring pays NCCL's hop latency inside a node per step; the rest of
  // NCCL's latency, and all of it for the pipelined tree, NVLS and
  // NVLS-tree, once.
  long long steps = 0;
  if (best.algo == NcclAlgo::kRing) {
    steps = op == CollectiveOp::kAllReduce ? 2LL * (v.nranks - 1) : v.nranks - 1LL;
    best.step_ps = ns_to_ps(1000.0 * ring_hop_us(v, best.proto));
  }
  best.base_ps = ns_to_ps(1000.0 * best.cost.latency_us) - steps * best.step_ps;
  // NVLS and NVLS-tree pay their kernel's pipeline instead: its fill and
  // its per-chunk synchronisation are what NCCL's latency for them (25 us,
  // and the tree's network hops) stands for in the selection, which keeps it.
  if (best.algo == NcclAlgo::kNvls || best.algo == NcclAlgo::kNvlsTree) {
    best.base_ps = ns_to_ps(1000.0 * nvls_pipeline_extra_us(v, best.algo, bytes, best.channels));
  }
  return best;
}

int nccl_kernel_units(const NcclChoice& c) {
  return c.algo == NcclAlgo::kAllPairs ? c.channels * kAllPairsBlocksPerChannel : c.channels;
}

std::optional<NcclChoice> nccl_copy_engine_choice(const NcclView& v, CollectiveOp op, TimePs barrier_ps,
                                                  TimePs issue_ps) {
  if (op != CollectiveOp::kAllGather && op != CollectiveOp::kAllToAll) return std::nullopt;
  if (v.nnodes != 1 || v.nranks < 2) return std::nullopt;
  NcclChoice c;
  c.algo = NcclAlgo::kP2p;
  c.proto = NcclProto::kSimple;
  c.channels = 0;
  c.wire_factor = 1.0;
  c.copy_engine = true;
  // The shape's leading latency step and its copy step each pay the
  // engines' step latency (the first barrier, the copies' launch); base_ps
  // is the second barrier. A host that issues one command per peer in
  // series (issue_ps > 0) adds one issue for each peer after the first.
  c.base_ps = barrier_ps + static_cast<TimePs>(v.nranks - 2) * issue_ps;
  return c;
}

std::string nccl_asymmetry(const NcclSettings& s, const std::vector<DimensionSpec>& dims) {
  if (!s.enabled) return "";
  int spanning = 0;
  for (const DimensionSpec& d : dims) spanning += d.npus > 1 ? 1 : 0;
  if (spanning > 1) return "NCCL collectives across nodes";
  // Channels starting on different GPUs run the same ring only when every
  // GPU starts as many: the defaults (24, NVLS 16) or the forced count.
  if (!dims.empty()) {
    const int ppn = dims[0].npus;
    const bool uneven = s.channels > 0 ? s.channels % ppn != 0 : (24 % ppn != 0 || 16 % ppn != 0);
    if (uneven) return "NCCL channels not a multiple of the GPUs per node";
  }
  return "";
}

}  // namespace acesim
