#include "cli/invoke.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "cli/option_checks.h"
#include "cli/platform_options.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "engine/simulation.h"
#include "registry/quote.h"
#include "registry/registry.h"

namespace acesim::cli {
namespace {

// A value of more bytes than this, quoted or without a space, is one no
// message should repeat whole (a path is at most 4096 bytes, and rarely a
// quarter of that): it is cut as quote() cuts.
constexpr std::size_t kLongRun = 1024;
// The most bytes a message keeps: whatever long value the rules below do
// not find is cut in the middle of the message (a deadlock's report of
// many collectives is a few KiB).
constexpr std::size_t kMaxMessage = 64 * 1024;

bool one_of(char c, std::string_view set) { return set.find(c) != std::string_view::npos; }

// `s` with each value between quotes ('...' or "...", opened after a space
// or a bracket, closed before a space, a bracket or punctuation) longer
// than kLongRun cut to kMaxQuoted bytes and "...".
std::string cut_quoted(const std::string& s) {
  std::string out;
  bool unclosed[2] = {false, false};  // no closing ' (or ") after here: no need to look again
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char q = s[i];
    const int k = q == '"' ? 1 : 0;
    if ((q == '\'' || q == '"') && !unclosed[k] && (i == 0 || one_of(s[i - 1], " ([{=,:"))) {
      std::size_t j = s.find(q, i + 1);
      while (j != std::string::npos && j + 1 < s.size() && !one_of(s[j + 1], " )]},:;.")) j = s.find(q, j + 1);
      if (j == std::string::npos) {
        unclosed[k] = true;
      } else {
        // The value whole, cut or not, and on after it: each byte is looked at once or twice.
        const std::string_view value = std::string_view(s).substr(i + 1, j - i - 1);
        out += q + (value.size() > kLongRun ? shortened(value) : std::string(value)) + q;
        i = j;
        continue;
      }
    }
    out += q;
  }
  return out;
}

// `s` with each run of more than kLongRun bytes without a space cut so.
std::string cut_runs(const std::string& s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t end = std::min(s.find_first_of(" \t", i), s.size());
    if (end - i > kLongRun) {
      out += shortened(std::string_view(s).substr(i, end - i));
    } else {
      out.append(s, i, end - i);
    }
    if (end < s.size()) out += s[end];
    i = end + 1;
  }
  return out;
}

// What the CLI prints of a message and Python raises: one line, and at most
// a bounded prefix of a value in it (issue 42 F13), whoever wrote the
// message (a message built with quote() has nothing left to cut).
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  if (s.size() <= kLongRun) return s;
  s = cut_runs(cut_quoted(s));
  if (s.size() > kMaxMessage) {
    // Its beginning and its end, cut between UTF-8 characters.
    auto inside = [&](std::size_t at) { return (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80; };
    std::size_t head = kMaxMessage - 1024;
    while (head > 0 && inside(head)) --head;
    std::size_t tail = s.size() - 1024;
    while (tail < s.size() && inside(tail)) ++tail;
    s = s.substr(0, head) + " ... (" + std::to_string(tail - head) + " bytes left out) ... " + s.substr(tail);
  }
  return s;
}

// Set by the caller of invoke(), never by a point's options.
bool caller_sets(const std::string& name) { return name == "json" || name == "progress" || name == "no-progress" || name == "help"; }

const CLI::Option* find_option(const CLI::App& command, const std::string& name) {
  for (const CLI::Option* opt : command.get_options()) {
    const std::vector<std::string>& longs = opt->get_lnames();
    if (std::find(longs.begin(), longs.end(), name) != longs.end()) return opt;
    if (!opt->nonpositional() && opt->get_name(true) == name) return opt;
  }
  return nullptr;
}

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : command.get_options()) {
    if (!opt->nonpositional()) names.push_back(opt->get_name(true));
    for (const std::string& l : opt->get_lnames()) {
      if (!caller_sets(l)) names.push_back(l);
    }
  }
  return names;
}

// A value's text as a command line carries it.
std::string argument_text(const nlohmann::json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned() || v.is_number_float()) return v.dump();
  throw InputError(where + ": expected a value, got " + std::string(v.is_object() ? "a map" : v.is_array() ? "a list inside a list" : "nothing"));
}

}  // namespace

const std::vector<CommandEntry>& command_table() {
  static const std::vector<CommandEntry> table{
      {"collective", add_collective_command, true},
      {"characterize", add_characterize_command, true},
      {"run", add_run_command, true},
      {"cluster", add_cluster_command, true},
      {"sweep", add_sweep_command, false},
      {"reproduce", add_reproduce_command, false},
      {"calibrate", add_calibrate_command, false},
      {"list", add_list_command, false},
  };
  return table;
}

CommandError current_error() {
  try {
    throw;
  } catch (const InvokeError& e) {
    return e.error();
  } catch (const CLI::ParseError& e) {
    return {kExitBadInput, one_line(e.what()) + " (see acesim --help)", false};
  } catch (const OutputError& e) {
    // 2: a path that cannot be used; 1: writing failed (a full disk).
    return {e.status(), one_line(e.what()), false, true};
  } catch (const InputError& e) {
    return {kExitBadInput, one_line(e.what()), false};
  } catch (const SimulationStuck& e) {
    return {kExitStuck, one_line(e.what()), false};
  } catch (const std::overflow_error& e) {
    return {kExitBadInput, one_line(e.what()), false};
  } catch (const std::invalid_argument& e) {
    // Model-level refusals of what the input asked for.
    return {kExitBadInput, one_line(e.what()), false};
  } catch (const std::exception& e) {
    return {1, one_line(e.what()), true};
  } catch (...) {
    return {1, "unknown exception", true};
  }
}

RegisteredCommand register_command(std::string_view name) {
  std::vector<std::string> names;
  for (const CommandEntry& e : command_table()) {
    if (!e.reports_json) continue;
    names.emplace_back(e.name);
    if (e.name != name) continue;
    RegisteredCommand r;
    r.app = std::make_unique<CLI::App>("acesim");
    r.runner = e.add(*r.app);
    r.command = r.app->get_subcommand(std::string(name));
    add_option_checks(*r.command);
    return r;
  }
  throw InputError("unknown command " + quote(name) + suggestion(name, names));
}

std::string option_spelling(std::string name) {
  if (name.rfind("--", 0) == 0) name = name.substr(2);
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

std::vector<std::string> option_arguments(const CLI::App& command, const std::string& name, const nlohmann::json& value,
                                          const std::string& where) {
  const std::string n = option_spelling(name);
  if (caller_sets(n)) throw InputError(where + ": --" + n + " is set by the caller, not per run");
  const CLI::Option* opt = find_option(command, n);
  if (opt == nullptr) {
    throw InputError(where + ": '" + command.get_name() + "' has no option " + quote(name) + suggestion(n, option_names(command)));
  }
  if (value.is_null()) return {};
  const std::string flag = opt->nonpositional() ? "--" + n : "";
  auto with_flag = [&](std::vector<std::string> values) {
    std::vector<std::string> args;
    for (std::string& v : values) {
      if (!flag.empty()) args.push_back(flag);
      args.push_back(std::move(v));
    }
    return args;
  };
  if (opt->get_expected_max() == 0) {  // a flag
    if (value == true || value == "true") return {flag};
    if (value == false || value == "false") return {};
    throw InputError(where + ": --" + n + " is a flag: true or false");
  }
  if (value.is_array()) {
    std::vector<std::string> items;
    for (const nlohmann::json& item : value) items.push_back(argument_text(item, where));
    if (opt->get_expected_max() > 1) return with_flag(items);
    std::string joined;
    for (const std::string& item : items) joined += (joined.empty() ? "" : ",") + item;
    return with_flag({joined});
  }
  return with_flag({argument_text(value, where)});
}

CommandReport invoke(const Invocation& invocation) {
  try {
    if (invocation.args.empty()) throw InputError("no command given");
    // Registering a command's options costs CLI11 more than a small
    // simulation (tens of microseconds), so each thread keeps each command
    // it ran registered, and puts it back as registered before the next.
    thread_local std::map<std::string, RegisteredCommand, std::less<>> registered;
    auto found = registered.find(invocation.args[0]);
    if (found == registered.end()) {
      found = registered.emplace(invocation.args[0], register_command(invocation.args[0])).first;
    } else {
      found->second.app->clear();
      found->second.runner.reset();
    }
    RegisteredCommand& c = found->second;
    // CLI11 takes the arguments last first.
    std::vector<std::string> args(invocation.args.rbegin(), invocation.args.rend());
    args.insert(args.begin(), "--no-progress");
    args.insert(args.begin(), "--json");
    c.app->parse(args);
    if (c.runner.platform != nullptr) {
      c.runner.platform->text = invocation.platform;
    } else if (invocation.platform) {
      throw InputError(invocation.args[0] + " takes no platform of its own (its file names one)");
    }
    return c.runner.report();
  } catch (...) {
    throw InvokeError(current_error());
  }
}

}  // namespace acesim::cli
