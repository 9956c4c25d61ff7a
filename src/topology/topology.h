// Multi-dimensional topologies. Each dimension is a ring, a fully-connected
// group or a switch, with its NPU count, link bandwidth (per direction), link
// latency and links per neighbour. A torus is rings in every dimension.
//
// Ranks are numbered in mixed radix with dimension 0 varying fastest. Links
// are numbered implicitly (no tables), so a topology of a million NPUs costs
// a few bytes per dimension. Routes are dimension-ordered: dimension 0 first.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/time.h"

namespace acesim {

using Rank = std::int32_t;
using LinkId = std::int64_t;

enum class DimKind { kRing, kFullyConnected, kSwitch };

std::string_view to_string(DimKind kind);

struct DimensionSpec {
  DimKind kind = DimKind::kRing;
  int npus = 1;
  double bandwidth_GBps = 0.0;  // per link, per direction (10^9 bytes/s)
  double latency_ns = 0.0;      // per link traversal
  int links_per_neighbour = 1;  // parallel links between neighbours: bandwidth adds up
};

struct Link {
  Rank src = -1;  // -1: the dimension's switch
  Rank dst = -1;
  int dim = 0;
  double bandwidth_Bps = 0.0;
  TimePs latency_ps = 0;
};

class Topology {
 public:
  // Throws std::invalid_argument naming the dimension and what is wrong.
  explicit Topology(std::vector<DimensionSpec> dims);

  int num_dims() const { return static_cast<int>(dims_.size()); }
  Rank num_npus() const { return num_npus_; }
  const DimensionSpec& dim(int d) const { return dims_[d]; }
  const std::vector<DimensionSpec>& dims() const { return dims_; }
  Rank stride(int d) const { return stride_[d]; }

  int coord(Rank r, int d) const { return static_cast<int>((r / stride_[d]) % dims_[d].npus); }
  std::vector<int> coords(Rank r) const;
  Rank rank_of(std::span<const int> coords) const;
  // `r` with its coordinate in dimension d replaced by `value`.
  Rank with_coord(Rank r, int d, int value) const {
    return r + static_cast<Rank>(value - coord(r, d)) * stride_[d];
  }

  LinkId num_links() const { return num_links_; }
  Link link(LinkId id) const;
  std::string link_name(LinkId id) const;
  // Appends the links from src to dst (dimension-ordered; shortest direction
  // on rings, ties going the positive way). Empty when src == dst.
  void route(Rank src, Rank dst, std::vector<LinkId>& out) const;

  // Link ids of the building blocks, for tests and stats.
  LinkId ring_link(Rank from, int d, bool positive) const;
  LinkId fc_link(Rank from, int d, int to_coord) const;
  LinkId switch_up_link(Rank from, int d) const;
  LinkId switch_down_link(Rank to, int d) const;

 private:
  int links_per_rank(int d) const;

  std::vector<DimensionSpec> dims_;
  std::vector<Rank> stride_;
  std::vector<LinkId> link_base_;
  std::vector<double> bandwidth_Bps_;
  std::vector<TimePs> latency_ps_;
  Rank num_npus_ = 1;
  LinkId num_links_ = 0;
};

}  // namespace acesim
