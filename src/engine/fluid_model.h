// Resources and activities: the one mechanism through which everything in
// acesim takes time.
//
// A Resource has a capacity in units per second (a link: bytes/s; HBM:
// bytes/s; compute units: FLOP/s). An Activity is work in progress with an
// amount of work and, for every unit of progress, an amount of each resource
// it uses. A weighted max-min fair-sharing solver gives every activity a rate
// (progressive filling: raise every rate in proportion to its weight until a
// resource saturates, freeze the activities on it, repeat), served in priority
// classes: class 0 first on full capacity, class 1 on what is left, and so on.
//
// When an activity starts, ends or is cancelled, only the connected component
// of resources and activities it touches is re-rated, lazily, once per
// simulated instant (see docs/model.md, "Sharing solver").
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "engine/slot_pool.h"
#include "engine/time.h"

namespace acesim {

using ResourceId = std::uint32_t;

struct ActivityId {
  std::uint32_t index = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t generation = 0;
  bool valid() const { return index != std::numeric_limits<std::uint32_t>::max(); }
};

struct Usage {
  ResourceId resource;
  double amount_per_unit;  // resource units consumed per unit of the activity's progress
};

struct ActivitySpec {
  double work = 0.0;  // units of progress to do
  double weight = 1.0;
  double max_rate = std::numeric_limits<double>::infinity();  // units per second
  int priority_class = 0;                                     // lower is served first
};

class ActivityListener {
 public:
  virtual void activity_done(std::uint64_t tag) = 0;

 protected:
  ~ActivityListener() = default;
};

struct FluidStats {
  std::uint64_t activities_started = 0;
  std::uint64_t activities_completed = 0;
  std::uint64_t components_solved = 0;
  std::uint64_t activities_rerated = 0;
};

class FluidModel {
 public:
  FluidModel() = default;
  FluidModel(const FluidModel&) = delete;
  FluidModel& operator=(const FluidModel&) = delete;

  ResourceId add_resource(std::string name, double capacity_per_s);
  void set_capacity(TimePs now, ResourceId id, double capacity_per_s);
  double capacity(ResourceId id) const { return resources_[id].capacity; }
  const std::string& resource_name(ResourceId id) const { return names_[id]; }
  std::size_t num_resources() const { return resources_.size(); }
  // Resource units consumed from time 0 to `now` (e.g. bytes a link carried).
  double resource_used(ResourceId id, TimePs now) const;
  // Current consumption in units per second (valid after the last solve).
  double resource_load(ResourceId id) const { return resources_[id].load; }

  // Starts an activity at `now`. `listener->activity_done(tag)` is called when
  // its work is done. Throws std::invalid_argument if the activity could run
  // at an unbounded rate (no resource used and no max_rate).
  ActivityId start(TimePs now, const ActivitySpec& spec, std::span<const Usage> usage,
                   ActivityListener* listener, std::uint64_t tag);
  // Removes an unfinished activity without calling its listener.
  void cancel(TimePs now, ActivityId id);
  bool active(ActivityId id) const;
  // Current rate (units/s) and remaining work; solve() runs first if needed.
  double rate(TimePs now, ActivityId id);
  double remaining(TimePs now, ActivityId id);

  // Re-rates what changed, then returns the earliest completion time (or
  // kTimeNever when no activity can finish).
  TimePs next_completion(TimePs now);
  // Completes every activity due at or before `now` in activity-index order,
  // calling their listeners. Returns how many completed.
  std::size_t complete_due(TimePs now);

  std::size_t active_count() const { return active_count_; }
  // Invariant: no resource carries more than its capacity. Throws
  // std::logic_error naming the resource. With checking on, run after every
  // solve (--check); callable any time.
  void check_capacities() const;
  void set_checking(bool on) { checking_ = on; }
  const FluidStats& stats() const { return stats_; }

 private:
  // The solver's state of a resource; its name and the breadth-first
  // search's stamps live in arrays of their own, so that walking a component
  // touches few cache lines.
  struct Resource {
    double capacity = 0.0;
    // Active activities using it, each with this resource's index in its
    // usage: a departing user's place goes to the last one without searching
    // that one's usage (an activity of a full run can use thousands of links).
    struct User {
      std::uint32_t activity;
      std::uint32_t slot;
    };
    std::vector<User> users;
    double load = 0.0;                 // current consumption, units/s
    double used = 0.0;                 // integral of load up to last_change
    TimePs last_change = 0;
    bool dirty = false;
    // solver scratch
    double left = 0.0;
    double denom = 0.0;
    std::uint32_t unfixed = 0;
  };
  struct Activity {
    double remaining = 0.0;
    double rate = 0.0;
    double weight = 1.0;
    double max_rate = 0.0;
    TimePs last_update = 0;
    TimePs done_at = kTimeNever;
    int priority_class = 0;
    std::uint32_t generation = 0;
    std::uint32_t version = 0;
    bool alive = false;
    bool fixed = false;
    ActivityListener* listener = nullptr;
    std::uint64_t tag = 0;
    std::vector<Usage> usage;
    std::vector<std::uint32_t> position;  // index of this activity in each used resource's users
  };
  struct Due {
    TimePs time;
    std::uint32_t index;
    std::uint32_t version;
  };

  void solve(TimePs now);
  void solve_component(TimePs now, std::uint32_t seed_resource);
  // Its parts, in order.
  void collect_component(std::uint32_t seed);
  void settle_component(TimePs now);
  void solve_single(TimePs now);
  void fill_class(std::size_t begin, std::size_t end);
  void fix(std::uint32_t a, double lambda);
  void schedule_completion(std::uint32_t a, TimePs now);
  void detach(std::uint32_t a, TimePs now);
  void mark_dirty(ResourceId r);
  void push_due(const Due& d);
  void compact_due();
  bool stale(const Due& d) const;

  std::vector<Resource> resources_;
  std::vector<std::string> names_;         // by resource
  std::vector<std::uint32_t> res_stamp_;   // by resource: the last solve that reached it
  SlotPool<Activity> activities_;
  std::vector<std::uint32_t> act_stamp_;   // by activity slot: the last solve that reached it
  std::vector<Due> due_;  // min-heap on (time, index)
  std::vector<ResourceId> dirty_;
  std::size_t active_count_ = 0;
  std::uint32_t stamp_ = 0;
  FluidStats stats_;
  bool checking_ = false;
  // scratch, kept to avoid allocation
  std::vector<std::uint32_t> comp_acts_;
  std::vector<ResourceId> comp_res_;
  std::vector<std::uint32_t> done_scratch_;
  std::vector<ResourceId> tied_;
};

}  // namespace acesim
