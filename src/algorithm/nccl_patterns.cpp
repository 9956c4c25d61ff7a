#include "algorithm/nccl_patterns.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace acesim {
namespace {

using Messages = std::map<std::pair<int, int>, double>;

PatternStep to_step(const Messages& msgs, int repeat) {
  PatternStep s;
  s.repeat = repeat;
  s.messages.reserve(msgs.size());
  for (const auto& [pair, fraction] : msgs) s.messages.push_back({pair.first, pair.second, fraction});
  return s;
}

void check_group(int n, int ppn, int channels) {
  if (n < 2 || ppn < 1 || n % ppn != 0 || channels < 1) {
    throw std::invalid_argument("NCCL pattern: needs n >= 2 a multiple of ppn >= 1 and channels >= 1");
  }
}

// NCCL's btree (ncclGetBtree): the parent of `rank`, -1 at the root.
int btree_parent(int rank, int nranks) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < nranks && (bit & rank) == 0) bit <<= 1;
  const int up = (rank ^ bit) | (bit << 1);
  return up < nranks ? up : rank ^ bit;
}

}  // namespace

int nccl_dtree_parent(int tree, int node, int nodes) {
  if (tree == 0) return btree_parent(node, nodes);
  if (nodes % 2 == 1) {
    const int up = btree_parent((node - 1 + nodes) % nodes, nodes);
    return up < 0 ? -1 : (up + 1) % nodes;
  }
  const int up = btree_parent(nodes - 1 - node, nodes);
  return up < 0 ? -1 : nodes - 1 - up;
}

Pattern nccl_ring_pattern(CollectiveOp op, int n, int ppn, int channels) {
  check_group(n, ppn, channels);
  // Channels starting at the same GPU run the same ring: merged, weighted.
  // The ring runs through odd nodes backwards, so that it leaves a node
  // from the GPU whose rail it enters the next one on (NCCL's rings on
  // rail-optimized fabrics do not cross rails; an odd node count leaves one
  // crossing, at the wrap).
  // Channel c starts at GPU c % ppn: each start's ring is walked once and
  // its edges counted as often as channels start there (a data-parallel
  // group of one GPU per node has one ring however many channels). Every
  // channel adds the same share, so an edge's fraction is that share added
  // once per channel crossing it, as when each channel added its own.
  std::map<std::pair<int, int>, int> crossings;
  for (int start = 0; start < std::min(channels, ppn); ++start) {
    const int times = channels / ppn + (start < channels % ppn ? 1 : 0);
    const auto member = [&](int p) {
      const int node = p / ppn;
      const int i = p % ppn;
      return node * ppn + (node % 2 == 0 ? (start + i) % ppn : (start + 2 * ppn - 1 - i) % ppn);
    };
    for (int p = 0; p < n; ++p) crossings[{member(p), member((p + 1) % n)}] += times;
  }
  const double share = 1.0 / (static_cast<double>(channels) * n);
  Messages msgs;
  for (const auto& [edge, times] : crossings) {
    double& f = msgs.emplace_hint(msgs.end(), edge, 0.0)->second;
    for (int k = 0; k < times; ++k) f += share;
  }
  Pattern pat;
  switch (op) {
    case CollectiveOp::kAllReduce: pat.steps.push_back(to_step(msgs, 2 * (n - 1))); break;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: pat.steps.push_back(to_step(msgs, n - 1)); break;
    default: throw std::invalid_argument("NCCL ring pattern: " + std::string(to_string(op)) + " is not modelled");
  }
  return pat;
}

Pattern nccl_mesh_ring_pattern(CollectiveOp op, int n, int ppn, int channels) {
  Pattern pat = nccl_ring_pattern(op, n, ppn, channels);
  if (ppn < 3) return pat;  // one link between two GPUs: nothing to spread
  // Sum each node's own hops, keep the crossings, and spread the sum over
  // the node's ppn (ppn - 1) ordered pairs.
  const int nodes = n / ppn;
  std::vector<double> inside(static_cast<std::size_t>(nodes), 0.0);
  Messages msgs;
  for (const PatternMessage& m : pat.steps.at(0).messages) {
    if (m.src / ppn == m.dst / ppn) {
      inside[static_cast<std::size_t>(m.src / ppn)] += m.fraction;
    } else {
      msgs[{m.src, m.dst}] += m.fraction;
    }
  }
  const double pairs = static_cast<double>(ppn) * (ppn - 1);
  for (int node = 0; node < nodes; ++node) {
    const int base = node * ppn;
    for (int a = 0; a < ppn; ++a) {
      for (int b = 0; b < ppn; ++b) {
        if (a != b) msgs[{base + a, base + b}] += inside[static_cast<std::size_t>(node)] / pairs;
      }
    }
  }
  pat.steps.at(0) = to_step(msgs, pat.steps.at(0).repeat);
  return pat;
}

Pattern nccl_allpairs_pattern(int n) {
  check_group(n, 1, 1);
  Messages msgs;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b) msgs[{a, b}] = 1.0 / n;
    }
  }
  Pattern pat;
  pat.steps.push_back(to_step(msgs, 2));
  return pat;
}

Pattern nccl_tree_pattern(int n, int ppn, int channels) {
  check_group(n, ppn, channels);
  const int nodes = n / ppn;
  Messages msgs;
  const double w = 1.0 / channels;
  const auto both_ways = [&](int a, int b) {
    msgs[{a, b}] += w;  // reduce toward the root
    msgs[{b, a}] += w;  // broadcast back
  };
  for (int c = 0; c < channels; ++c) {
    const int head = c % ppn;
    for (int node = 0; node < nodes; ++node) {
      const int base = node * ppn;
      for (int k = 1; k < ppn; ++k) both_ways(base + (head + k) % ppn, base + (head + k - 1) % ppn);
      const int up = nccl_dtree_parent(c % 2, node, nodes);
      if (up >= 0) both_ways(base + head, up * ppn + head);
    }
  }
  Pattern pat;
  pat.steps.push_back(to_step(msgs, 1));
  return pat;
}

Pattern nccl_nvls_tree_pattern(int n, int ppn) {
  check_group(n, ppn, 1);
  const int nodes = n / ppn;
  Messages msgs;
  const double half = 1.0 / (2.0 * ppn);
  for (int g = 0; g < ppn; ++g) {
    for (int t = 0; t < 2; ++t) {
      for (int node = 0; node < nodes; ++node) {
        const int up = nccl_dtree_parent(t, node, nodes);
        if (up < 0) continue;
        msgs[{node * ppn + g, up * ppn + g}] += half;  // reduce toward the root
        msgs[{up * ppn + g, node * ppn + g}] += half;  // broadcast back
      }
    }
  }
  Pattern pat;
  pat.steps.push_back(to_step(msgs, 1));
  return pat;
}

Pattern nccl_collnet_direct_pattern(int n, int ppn) {
  check_group(n, ppn, 1);
  Messages msgs;
  for (int base = 0; base < n; base += ppn) {
    for (int i = 0; i < ppn; ++i) {
      for (int j = 0; j < ppn; ++j) {
        if (i != j) msgs[{base + i, base + j}] += 2.0 / ppn;
      }
    }
  }
  Pattern pat;
  pat.steps.push_back(to_step(msgs, 1));
  return pat;
}

Pattern nccl_collnet_chain_pattern(int n, int ppn, int channels) {
  check_group(n, ppn, channels);
  Messages msgs;
  const double w = 1.0 / channels;
  for (int c = 0; c < channels; ++c) {
    const int head = c % ppn;
    for (int base = 0; base < n; base += ppn) {
      for (int k = 1; k < ppn; ++k) {
        const int a = base + (head + k) % ppn;
        const int b = base + (head + k - 1) % ppn;
        msgs[{a, b}] += w;  // reduce toward the head
        msgs[{b, a}] += w;  // broadcast back
      }
    }
  }
  Pattern pat;
  pat.steps.push_back(to_step(msgs, 1));
  return pat;
}

}  // namespace acesim
