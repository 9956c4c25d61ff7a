// Registries: one per plug-in family (collective algorithms, topology kinds,
// network backends, endpoint executors, workload formats, built-in models,
// platform presets). An implementation is one file that defines an entry and
// a `register_*` function; the family's `register_builtin_*()` calls it (one
// line per implementation). Nothing registers itself statically: a static
// registration object in a static library is silently dropped by the linker.
//
// Every name a user may type is looked up here, so CLI choices, `--help`
// lists, "did you mean" suggestions and the docs' tables come from one list.
// Names match ignoring case, '-', '_' and spaces (normalize_name), so
// "all-reduce", "ALL_REDUCE" and "allreduce" are one name.
#pragma once

#include "registry/quote.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace acesim {

// The one name normaliser: lower case, without '-', '_' and ' '.
std::string normalize_name(std::string_view s);

// "a | b | c", for option help.
std::string join_names(const std::vector<std::string>& names, std::string_view separator = " | ");

// The candidate closest to `word` by edit distance, if it is close enough to
// be a likely typo; empty otherwise.
std::string closest_match(std::string_view word, std::span<const std::string> candidates);
// " (did you mean 'x'?)" or " (valid: a, b, c)" for an unknown name.
std::string suggestion(std::string_view word, std::span<const std::string> candidates);

// What every entry has. `name` is the canonical spelling (reports print
// it); `aliases` are other accepted spellings; `help` is one line for
// `--help` and the docs.
struct RegistryEntryBase {
  std::string name;
  std::vector<std::string> aliases;
  std::string help;
};

// Entry derives from RegistryEntryBase. Entries live as long as the registry
// and never move (pointers to them stay valid while more are added).
template <typename Entry>
class Registry {
 public:
  // `family` names the kind of thing in messages ("collective algorithm").
  explicit Registry(std::string family) : family_(std::move(family)) {}
  // With the family's built-ins, registered at once. A family's accessor is
  //   Registry<X>& x_registry() { static Registry<X> r("x", register_builtin_xs); return r; }
  // so the built-ins are there on first use, once, thread-safely.
  Registry(std::string family, void (*register_builtins)(Registry&)) : family_(std::move(family)) {
    register_builtins(*this);
  }
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Throws std::logic_error when a name or alias is already taken. Aliases
  // that are the name (or another alias) once normalised are dropped.
  // Registries are not locked: add entries before simulations run on
  // several threads (lookups from many threads are safe).
  const Entry& add(Entry entry) {
    if (entry.name.empty()) throw std::logic_error(family_ + ": an entry needs a name");
    std::vector<std::string> aliases;
    std::vector<std::string> seen{normalize_name(entry.name)};
    for (std::string& a : entry.aliases) {
      const std::string n = normalize_name(a);
      if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
      seen.push_back(n);
      aliases.push_back(std::move(a));
    }
    entry.aliases = std::move(aliases);
    for (const std::string& n : spellings(entry)) {
      if (find(n) != nullptr) throw std::logic_error(family_ + ": '" + n + "' is registered twice");
    }
    entries_.push_back(std::move(entry));
    for (const std::string& n : seen) index_.emplace_back(n, &entries_.back());
    return entries_.back();
  }

  // nullptr when no entry has this name or alias.
  const Entry* find(std::string_view name) const {
    const std::string n = normalize_name(name);
    for (const auto& [spelling, entry] : index_) {
      if (spelling == n) return entry;
    }
    return nullptr;
  }

  // Throws std::invalid_argument "unknown <family> 'x' (did you mean ...)".
  const Entry& get(std::string_view name) const {
    if (const Entry* e = find(name)) return *e;
    throw std::invalid_argument(unknown(name));
  }
  // "unknown <family> 'x' (did you mean 'y'?)", for callers that add a location.
  std::string unknown(std::string_view name) const {
    return "unknown " + family_ + " " + quote(name) + suggestion(name, names());
  }

  // Canonical names in registration order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }
  // "a | b | c", for option help.
  std::string choices() const { return join_names(names()); }
  const std::deque<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  const std::string& family() const { return family_; }

 private:
  static std::vector<std::string> spellings(const Entry& e) {
    std::vector<std::string> s{e.name};
    s.insert(s.end(), e.aliases.begin(), e.aliases.end());
    return s;
  }
  std::string family_;
  std::deque<Entry> entries_;
  std::vector<std::pair<std::string, const Entry*>> index_;  // normalised spellings, in order
};

}  // namespace acesim
