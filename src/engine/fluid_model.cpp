#include "engine/fluid_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace acesim {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
// A resource counts as saturated within this share of its capacity.
constexpr double kSlack = 1e-9;

bool due_later(TimePs ta, std::uint32_t ia, TimePs tb, std::uint32_t ib) {
  return ta != tb ? ta > tb : ia > ib;
}
}  // namespace

ResourceId FluidModel::add_resource(std::string name, double capacity_per_s) {
  if (!(capacity_per_s >= 0.0) || std::isinf(capacity_per_s)) {
    throw std::invalid_argument("resource '" + name + "': capacity must be finite and >= 0");
  }
  Resource r;
  r.capacity = capacity_per_s;
  resources_.push_back(r);
  names_.push_back(std::move(name));
  res_stamp_.push_back(0);
  return static_cast<ResourceId>(resources_.size() - 1);
}

void FluidModel::set_capacity(TimePs now, ResourceId id, double capacity_per_s) {
  if (!(capacity_per_s >= 0.0) || std::isinf(capacity_per_s)) {
    throw std::invalid_argument("resource '" + names_[id] + "': capacity must be finite and >= 0");
  }
  // Progress up to now happened at the current rates; the next solve of
  // this resource's component settles it before re-rating, so marking the
  // resource dirty is enough (several changes in one instant, one solve).
  (void)now;
  resources_[id].capacity = capacity_per_s;
  mark_dirty(id);
}

double FluidModel::resource_used(ResourceId id, TimePs now) const {
  const Resource& r = resources_[id];
  return r.used + r.load * ps_to_seconds(now - r.last_change);
}

void FluidModel::mark_dirty(ResourceId r) {
  if (!resources_[r].dirty) {
    resources_[r].dirty = true;
    dirty_.push_back(r);
  }
}

ActivityId FluidModel::start(TimePs now, const ActivitySpec& spec, std::span<const Usage> usage,
                             ActivityListener* listener, std::uint64_t tag) {
  if (!(spec.weight > 0.0) || std::isinf(spec.weight)) {
    throw std::invalid_argument("activity weight must be finite and > 0");
  }
  if (!(spec.max_rate > 0.0)) throw std::invalid_argument("activity max_rate must be > 0");
  bool bounded = !std::isinf(spec.max_rate);
  for (const Usage& u : usage) {
    if (u.resource >= resources_.size()) throw std::invalid_argument("activity uses an unknown resource");
    if (!(u.amount_per_unit >= 0.0) || std::isinf(u.amount_per_unit)) {
      throw std::invalid_argument("activity usage must be finite and >= 0");
    }
    if (u.amount_per_unit > 0.0) bounded = true;
  }
  if (!bounded) throw std::invalid_argument("activity uses no resource and has no max_rate: its rate would be unbounded");

  const std::uint32_t idx = activities_.acquire();
  if (idx >= act_stamp_.size()) act_stamp_.resize(idx + 1, 0);
  Activity& a = activities_[idx];
  a.remaining = std::max(0.0, spec.work);
  a.rate = 0.0;
  a.weight = spec.weight;
  a.max_rate = spec.max_rate;
  a.priority_class = spec.priority_class;
  a.last_update = now;
  a.done_at = kTimeNever;
  a.alive = true;
  a.listener = listener;
  a.tag = tag;
  a.usage.clear();
  a.position.clear();
  ++active_count_;
  ++stats_.activities_started;

  if (a.remaining <= 0.0) {
    // Nothing to do: completes at once, holds no resource.
    a.done_at = now;
    push_due(Due{now, idx, ++a.version});
    return ActivityId{idx, a.generation};
  }
  // Fast path, exact for max-min fairness: an activity whose resources can
  // all take it at its cap without saturating touches no bottleneck, so no
  // other activity's rate changes.
  bool fits = !std::isinf(a.max_rate);
  for (const Usage& u : usage) {
    if (u.amount_per_unit <= 0.0) continue;
    const Resource& r = resources_[u.resource];
    if (r.dirty || r.load + u.amount_per_unit * a.max_rate > r.capacity * (1.0 - kSlack)) fits = false;
  }
  for (const Usage& u : usage) {
    if (u.amount_per_unit <= 0.0) continue;
    a.usage.push_back(u);
    Resource& r = resources_[u.resource];
    a.position.push_back(static_cast<std::uint32_t>(r.users.size()));
    r.users.push_back({idx, static_cast<std::uint32_t>(a.usage.size() - 1)});
    if (fits) {
      r.used += r.load * ps_to_seconds(now - r.last_change);
      r.last_change = now;
      r.load += u.amount_per_unit * a.max_rate;
    } else {
      mark_dirty(u.resource);
    }
  }
  if (a.usage.empty() || fits) {
    a.rate = a.max_rate;
    schedule_completion(idx, now);
  }
  return ActivityId{idx, a.generation};
}

bool FluidModel::active(ActivityId id) const {
  return id.valid() && id.index < activities_.size() && activities_[id.index].alive &&
         activities_[id.index].generation == id.generation;
}

void FluidModel::detach(std::uint32_t idx, TimePs now) {
  Activity& a = activities_[idx];
  // Leaving resources none of which is saturated frees no bottleneck: the
  // others keep their rates (exact for max-min fairness).
  bool saturated = false;
  for (const Usage& u : a.usage) {
    const Resource& r = resources_[u.resource];
    if (r.dirty || r.load >= r.capacity * (1.0 - kSlack)) saturated = true;
  }
  for (std::size_t k = 0; k < a.usage.size(); ++k) {
    Resource& r = resources_[a.usage[k].resource];
    // The departing activity's consumption ends now: settle the integral.
    r.used += r.load * ps_to_seconds(now - r.last_change);
    r.last_change = now;
    r.load = std::max(0.0, r.load - a.rate * a.usage[k].amount_per_unit);
    const std::uint32_t pos = a.position[k];
    const Resource::User moved = r.users.back();
    r.users[pos] = moved;
    r.users.pop_back();
    if (moved.activity != idx) activities_[moved.activity].position[moved.slot] = pos;
    if (saturated) mark_dirty(a.usage[k].resource);
  }
  a.alive = false;
  ++a.generation;
  ++a.version;
  --active_count_;
  activities_.release(idx);
}

void FluidModel::cancel(TimePs now, ActivityId id) {
  if (!active(id)) return;
  detach(id.index, now);
}

double FluidModel::rate(TimePs now, ActivityId id) {
  if (!dirty_.empty()) solve(now);
  return active(id) ? activities_[id.index].rate : 0.0;
}

double FluidModel::remaining(TimePs now, ActivityId id) {
  if (!active(id)) return 0.0;
  if (!dirty_.empty()) solve(now);
  const Activity& a = activities_[id.index];
  return std::max(0.0, a.remaining - a.rate * ps_to_seconds(now - a.last_update));
}

void FluidModel::push_due(const Due& d) {
  due_.push_back(d);
  std::push_heap(due_.begin(), due_.end(), [](const Due& x, const Due& y) {
    return due_later(x.time, x.index, y.time, y.index);
  });
}

bool FluidModel::stale(const Due& d) const {
  const Activity& a = activities_[d.index];
  return !a.alive || a.version != d.version;
}

void FluidModel::compact_due() {
  std::vector<Due> kept;
  kept.reserve(active_count_);
  for (const Due& d : due_) {
    if (!stale(d)) kept.push_back(d);
  }
  due_.swap(kept);
  std::make_heap(due_.begin(), due_.end(), [](const Due& x, const Due& y) {
    return due_later(x.time, x.index, y.time, y.index);
  });
}

void FluidModel::schedule_completion(std::uint32_t idx, TimePs now) {
  Activity& a = activities_[idx];
  TimePs t;
  if (a.remaining <= 0.0) {
    t = now;
  } else if (a.rate <= 0.0) {
    t = kTimeNever;
  } else {
    const TimePs dt = seconds_to_ps_ceil(a.remaining / a.rate);
    t = dt >= kTimeNever - now ? kTimeNever : now + dt;
  }
  if (t == kTimeNever && a.rate > 0.0 && a.remaining > 0.0) {
    throw std::overflow_error("simulated time would pass the 106 days int64 picoseconds can count");
  }
  if (t == a.done_at) return;
  a.done_at = t;
  ++a.version;
  if (t != kTimeNever) push_due(Due{t, idx, a.version});
}

void FluidModel::check_capacities() const {
  for (std::size_t id = 0; id < resources_.size(); ++id) {
    const Resource& r = resources_[id];
    double load = 0.0;
    for (const Resource::User& user : r.users) {
      const Activity& a = activities_[user.activity];
      for (const Usage& u : a.usage) {
        if (&resources_[u.resource] == &r) load += u.amount_per_unit * a.rate;
      }
    }
    if (load > r.capacity * (1.0 + 1e-9) + 1e-9) {
      throw std::logic_error("invariant broken: resource '" + names_[id] + "' carries " + std::to_string(load) +
                             " units/s, above its capacity of " + std::to_string(r.capacity));
    }
  }
}

void FluidModel::solve(TimePs now) {
  ++stamp_;
  for (ResourceId r : dirty_) {
    Resource& res = resources_[r];
    if (res.users.empty()) {
      // Emptied by departures (detach() settled its integral): nothing to re-rate.
      res.used += res.load * ps_to_seconds(now - res.last_change);
      res.last_change = now;
      res.load = 0.0;
      continue;
    }
    if (res_stamp_[r] != stamp_) solve_component(now, r);
  }
  for (ResourceId r : dirty_) resources_[r].dirty = false;
  dirty_.clear();
  if (checking_) check_capacities();
  if (due_.size() > 4 * active_count_ + 1024) compact_due();
}

void FluidModel::fix(std::uint32_t idx, double lambda) {
  Activity& a = activities_[idx];
  a.rate = a.weight * lambda;
  a.fixed = true;
  for (const Usage& u : a.usage) {
    Resource& r = resources_[u.resource];
    r.left -= u.amount_per_unit * a.rate;
    r.denom -= u.amount_per_unit * a.weight;
    r.load += u.amount_per_unit * a.rate;
    --r.unfixed;
  }
}

// The connected component of `seed`: breadth-first over resource ->
// activity -> resource (a deterministic order).
void FluidModel::collect_component(std::uint32_t seed) {
  comp_acts_.clear();
  comp_res_.clear();
  const std::uint32_t stamp = stamp_;
  res_stamp_[seed] = stamp;
  comp_res_.push_back(seed);
  for (std::size_t i = 0; i < comp_res_.size(); ++i) {
    for (const Resource::User& user : resources_[comp_res_[i]].users) {
      const std::uint32_t ai = user.activity;
      if (act_stamp_[ai] == stamp) continue;
      act_stamp_[ai] = stamp;
      comp_acts_.push_back(ai);
      for (const Usage& u : activities_[ai].usage) {
        if (res_stamp_[u.resource] != stamp) {
          res_stamp_[u.resource] = stamp;
          comp_res_.push_back(u.resource);
        }
      }
    }
  }
}

// Settles the component's progress and resource integrals at the old rates.
void FluidModel::settle_component(TimePs now) {
  for (ResourceId r : comp_res_) {
    Resource& res = resources_[r];
    res.used += res.load * ps_to_seconds(now - res.last_change);
    res.last_change = now;
    res.load = 0.0;
    res.left = res.capacity;
  }
  for (std::uint32_t ai : comp_acts_) {
    Activity& a = activities_[ai];
    a.remaining = std::max(0.0, a.remaining - a.rate * ps_to_seconds(now - a.last_update));
    a.last_update = now;
  }
}

// One activity alone: its rate is its tightest bound; no filling needed.
void FluidModel::solve_single(TimePs now) {
  const std::uint32_t ai = comp_acts_[0];
  Activity& a = activities_[ai];
  double lambda = std::isinf(a.max_rate) ? kInf : a.max_rate / a.weight;
  for (const Usage& u : a.usage) {
    lambda = std::min(lambda, std::max(0.0, resources_[u.resource].capacity) / (u.amount_per_unit * a.weight));
  }
  a.rate = a.weight * lambda;
  a.fixed = true;
  for (const Usage& u : a.usage) resources_[u.resource].load += u.amount_per_unit * a.rate;
  ++stats_.activities_rerated;
  schedule_completion(ai, now);
}

// Progressive filling of the activities comp_acts_[begin, end) of one
// priority class on what earlier classes left.
void FluidModel::fill_class(std::size_t begin, std::size_t end) {
  const int cls = activities_[comp_acts_[begin]].priority_class;
  for (ResourceId r : comp_res_) {
    resources_[r].denom = 0.0;
    resources_[r].unfixed = 0;
  }
  for (std::size_t k = begin; k < end; ++k) {
    Activity& a = activities_[comp_acts_[k]];
    a.fixed = false;
    for (const Usage& u : a.usage) {
      resources_[u.resource].denom += u.amount_per_unit * a.weight;
      ++resources_[u.resource].unfixed;
    }
  }
  std::size_t unfixed = end - begin;
  while (unfixed > 0) {
    // The lowest fair level among resources (and activity caps).
    double best = kInf;
    for (ResourceId r : comp_res_) {
      const Resource& res = resources_[r];
      if (res.unfixed == 0 || !(res.denom > 0.0)) continue;
      best = std::min(best, std::max(0.0, res.left) / res.denom);
    }
    std::uint32_t capped = 0;
    bool cap_wins = false;
    for (std::size_t k = begin; k < end; ++k) {
      const Activity& a = activities_[comp_acts_[k]];
      if (a.fixed || std::isinf(a.max_rate)) continue;
      const double lambda = a.max_rate / a.weight;
      if (lambda < best) {
        best = lambda;
        capped = comp_acts_[k];
        cap_wins = true;
      }
    }
    if (!(best < kInf)) {
      // Only reachable through a bug: start() refuses unbounded activities.
      throw std::logic_error("fluid solver: activity with unbounded rate");
    }
    if (cap_wins) {
      fix(capped, best);
      --unfixed;
      continue;
    }
    // Freeze the unfixed activities of this class on every resource at
    // that level. Resources tied with the minimum stay at it while the
    // others are frozen, so freezing them all in one round is exact; in
    // symmetric systems it turns hundreds of rounds into one.
    const double tie = best * (1.0 + 1e-12);
    tied_.clear();
    for (ResourceId r : comp_res_) {
      const Resource& res = resources_[r];
      if (res.unfixed == 0 || !(res.denom > 0.0)) continue;
      if (std::max(0.0, res.left) / res.denom <= tie) tied_.push_back(r);
    }
    for (ResourceId r : tied_) {
      const auto& users = resources_[r].users;
      for (std::size_t k = 0; k < users.size(); ++k) {
        const std::uint32_t ai = users[k].activity;
        Activity& a = activities_[ai];
        if (a.fixed || a.priority_class != cls) continue;
        fix(ai, best);
        --unfixed;
      }
    }
  }
}

void FluidModel::solve_component(TimePs now, std::uint32_t seed) {
  ++stats_.components_solved;
  collect_component(seed);
  settle_component(now);
  if (comp_acts_.size() == 1) {
    solve_single(now);
    return;
  }
  // Serve priority classes in order. The breadth-first order is
  // deterministic; only several classes need grouping (stable, so each
  // class keeps it).
  bool one_class = true;
  for (std::uint32_t ai : comp_acts_) one_class = one_class && activities_[ai].priority_class == activities_[comp_acts_[0]].priority_class;
  if (!one_class) {
    std::stable_sort(comp_acts_.begin(), comp_acts_.end(), [this](std::uint32_t x, std::uint32_t y) {
      return activities_[x].priority_class < activities_[y].priority_class;
    });
  }
  std::size_t begin = 0;
  while (begin < comp_acts_.size()) {
    const int cls = activities_[comp_acts_[begin]].priority_class;
    std::size_t end = begin;
    while (end < comp_acts_.size() && activities_[comp_acts_[end]].priority_class == cls) ++end;
    fill_class(begin, end);
    begin = end;
  }
  for (std::uint32_t ai : comp_acts_) {
    ++stats_.activities_rerated;
    schedule_completion(ai, now);
  }
}

TimePs FluidModel::next_completion(TimePs now) {
  if (!dirty_.empty()) solve(now);
  while (!due_.empty() && stale(due_.front())) {
    std::pop_heap(due_.begin(), due_.end(), [](const Due& x, const Due& y) {
      return due_later(x.time, x.index, y.time, y.index);
    });
    due_.pop_back();
  }
  return due_.empty() ? kTimeNever : due_.front().time;
}

std::size_t FluidModel::complete_due(TimePs now) {
  std::size_t count = 0;
  auto cmp = [](const Due& x, const Due& y) { return due_later(x.time, x.index, y.time, y.index); };
  while (!due_.empty() && due_.front().time <= now) {
    const Due d = due_.front();
    std::pop_heap(due_.begin(), due_.end(), cmp);
    due_.pop_back();
    if (stale(d)) continue;
    Activity& a = activities_[d.index];
    ActivityListener* listener = a.listener;
    const std::uint64_t tag = a.tag;
    a.remaining = 0.0;
    detach(d.index, now);
    ++stats_.activities_completed;
    ++count;
    if (listener != nullptr) listener->activity_done(tag);
  }
  return count;
}

}  // namespace acesim
