// The executor seam from outside: executors registered by the test suite
// (not shipped in src/) run end to end through run_collective(), and the
// registry lists, refuses and suggests names as CLI and config readers need.
#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "endpoint/endpoint.h"
#include "endpoint/executor_registry.h"
#include "report/collective_sweep.h"
#include "support.h"

namespace acesim {
namespace {

using test::dim;
using test::platform;

constexpr double kS = 64.0 * 1024 * 1024;

// Charges a fixed number of HBM bytes per byte an NPU sends, nothing else.
constexpr double kToyHbmPerByte = 4.0;

class ToyHbmExecutor final : public Executor {
 public:
  using Executor::Executor;
  void phase_load(const PhaseCost&, std::span<const Rank> members, const TransferShape& shape, double phase_bytes,
                  EndpointLoad& out) override {
    Endpoints& ep = endpoints();
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (!ep.simulated(members[i])) continue;
      Endpoints::Npu& n = ep.npu(members[i]);
      const double hbm = kToyHbmPerByte * shape.originated[i] * phase_bytes;
      out.demands.push_back({n.hbm_comm, hbm});
      n.stats.hbm_bytes_comm += hbm;
    }
  }
};

// One token per NPU: a chunk takes it on every member as it enters a
// collective and gives it back as it leaves, so chunks go one at a time.
// Chunks over 1 GiB are refused outright.
class ToyTokenExecutor final : public Executor {
 public:
  using Executor::Executor;
  void add_npu(std::size_t, const std::string&) override { busy_.push_back(false); }
  std::string unfit_reason(const ChunkBytes& chunk) const override {
    return chunk.in > static_cast<double>(1ull << 30) ? "toy-token: chunks over 1 GiB are refused" : "";
  }
  bool gates_entry() const override { return true; }
  bool try_enter(std::span<const Rank> members, const ChunkBytes&) override {
    Endpoints& ep = endpoints();
    for (Rank r : members) {
      if (ep.simulated(r) && busy_[ep.npu(r).index]) return false;
    }
    for (Rank r : members) {
      if (ep.simulated(r)) busy_[ep.npu(r).index] = true;
    }
    return true;
  }
  bool leave(Rank r, const ChunkBytes&) override {
    busy_[endpoints().npu(r).index] = false;
    return true;
  }
  std::string_view entry_resource() const override { return "the toy token"; }

 private:
  std::vector<bool> busy_;
};

template <typename T>
void register_toy(const std::string& name, const std::string& help) {
  ExecutorRegistry& reg = executor_registry();
  if (reg.find(name) != nullptr) return;  // registered by an earlier test (--gtest_repeat)
  ExecutorEntry e;
  e.name = name;
  e.help = help;
  e.make = [](Endpoints& ep) -> std::unique_ptr<Executor> { return std::make_unique<T>(ep); };
  e.describe = [](const NpuConfig& npu) { return " (" + std::to_string(npu.compute_units) + " units idle)"; };
  reg.add(std::move(e));
}

TEST(ToyExecutor, FixedHbmBytesPerByteSentBindTheRing) {
  register_toy<ToyHbmExecutor>("toy-hbm", "4 HBM bytes per byte sent");
  // Links far faster than HBM: a ring all-gather's 3/4 S bytes sent per NPU
  // cost 4 x 3/4 S of HBM at 100 GB/s.
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 10'000, 0)});
  p.npu.hbm_GBps = 100;
  p.npu.executor = "toy-hbm";
  CollectiveRequestSpec req;
  req.op = CollectiveOp::kAllGather;
  const CollectiveResult r = run_collective(p, req, static_cast<std::uint64_t>(kS));
  const double hbm = kToyHbmPerByte * 0.75 * kS;
  EXPECT_DOUBLE_EQ(r.hbm_bytes, hbm);
  EXPECT_NEAR(ps_to_ns(r.time_ps), hbm / 100, 1.0);
  EXPECT_EQ(r.executor, "toy-hbm");
  EXPECT_NE(describe_platform(p).find("executor toy-hbm (80 units idle)"), std::string::npos) << describe_platform(p);
}

TEST(ToyExecutor, EntryAdmissionSerializesChunks) {
  register_toy<ToyTokenExecutor>("toy-token", "one chunk in flight per NPU");
  // 2D hierarchical all-reduce, 4 chunks: with one token per NPU the chunks
  // go through their three phases one at a time (as ACE with SRAM for one).
  PlatformConfig p = platform({dim(DimKind::kRing, 4, 200, 0), dim(DimKind::kRing, 4, 50, 0)});
  p.collectives.chunks = 4;
  p.npu.executor = "toy-token";
  const double c = kS / 4;
  const double ta = 0.75 * c / 200;           // RS or AG on dimension 0, ns
  const double tb = 2 * 0.75 * (c / 4) / 50;  // AR on dimension 1
  EXPECT_NEAR(test::time_ns(p, CollectiveOp::kAllReduce, kS), 4 * (2 * ta + tb), 1.0);
  PlatformConfig ideal = p;  // pipelined
  ideal.npu.executor = "ideal";
  EXPECT_LT(test::time_ns(ideal, CollectiveOp::kAllReduce, kS), 4 * (2 * ta + tb) - 1.0);
  // Symmetric and full simulations agree.
  CollectiveRequestSpec req;
  req.full = true;
  EXPECT_NEAR(ps_to_ns(run_collective(p, req, static_cast<std::uint64_t>(kS)).time_ps), 4 * (2 * ta + tb), 1.0);
  // A chunk the executor can never take is refused up front, in its words.
  p.collectives.chunks = 1;
  try {
    test::time_ns(p, CollectiveOp::kAllReduce, 2.0 * (1ull << 30));
    FAIL() << "an unfit chunk was not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "toy-token: chunks over 1 GiB are refused");
  }
}

TEST(ExecutorRegistry, ListsTheBuiltinsInRegistrationOrder) {
  ExecutorRegistry reg("executor");
  register_builtin_executors(reg);
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"ideal", "sm", "ace", "dma"}));
  EXPECT_EQ(reg.choices(), "ideal | sm | ace | dma");
  // The shared registry starts with the same ones (tests may add toys after).
  const std::vector<std::string> shared = executor_registry().names();
  ASSERT_GE(shared.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(shared.begin(), shared.begin() + 4), reg.names());
}

TEST(ExecutorRegistry, RefusesATakenName) {
  ExecutorRegistry reg("executor");
  register_builtin_executors(reg);
  ExecutorEntry again;
  again.name = "SM";  // names match ignoring case
  EXPECT_THROW(reg.add(again), std::logic_error);
  ExecutorEntry alias;
  alias.name = "nccl";
  alias.aliases = {"ace"};
  EXPECT_THROW(reg.add(alias), std::logic_error);
  EXPECT_EQ(reg.size(), 4u);
}

TEST(ExecutorRegistry, FindsAnySpellingAndSuggestsCloseNames) {
  const ExecutorRegistry& reg = executor_registry();
  ASSERT_NE(reg.find("Ace"), nullptr);
  EXPECT_EQ(reg.find("Ace")->name, "ace");
  EXPECT_EQ(reg.find("S-M")->name, "sm");
  EXPECT_EQ(reg.find("acee"), nullptr);
  EXPECT_EQ(reg.unknown("acee"), "unknown executor 'acee' (did you mean 'ace'?)");
  EXPECT_NE(reg.unknown("bogus").find("(valid: ideal, sm, ace"), std::string::npos);
  EXPECT_THROW(reg.get("bogus"), std::invalid_argument);
}

TEST(Endpoints, GettersCreateNothing) {
  Simulation sim;
  const Topology topo({dim(DimKind::kRing, 4, 100, 0), dim(DimKind::kRing, 2, 100, 0)});
  NpuConfig cfg;
  cfg.executor = "sm";
  Endpoints ep(sim, topo, cfg);
  const std::size_t resources = sim.fluid().num_resources();
  const NpuStats& s = ep.stats(3);
  EXPECT_EQ(s.sent_per_dim, std::vector<double>(2, 0.0));
  EXPECT_EQ(s.received_per_dim, std::vector<double>(2, 0.0));
  EXPECT_EQ(s.hbm_bytes_comm, 0.0);
  EXPECT_EQ(ep.units_held(3), 0);
  EXPECT_EQ(ep.mean_stats(8).count, 8);
  EXPECT_NO_THROW(ep.check_traffic_balance(8));
  EXPECT_EQ(ep.npus_touched(), 0u);
  EXPECT_EQ(sim.fluid().num_resources(), resources);
  // A collective's units, once held, show without creating anything more.
  ep.hold_units(3, 5);
  const std::size_t touched = sim.fluid().num_resources();
  EXPECT_EQ(ep.units_held(3), 5);
  EXPECT_EQ(ep.npus_touched(), 1u);
  EXPECT_EQ(sim.fluid().num_resources(), touched);
}

TEST(Endpoints, UnknownExecutorIsRefused) {
  Simulation sim;
  const Topology topo({dim(DimKind::kRing, 4, 100, 0)});
  NpuConfig cfg;
  cfg.executor = "nccl";
  try {
    Endpoints ep(sim, topo, cfg);
    FAIL() << "an unknown executor was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown executor 'nccl'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace acesim
