#include "cli/option_checks.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "config/input_error.h"
#include "config/output_file.h"

namespace acesim::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOutputFile = "output-file";
constexpr const char* kOutputDir = "output-dir";

// A whole number as CLI11 should read it (a transform: it may rewrite the
// text it is given). `is_unsigned`: the option's type has no sign.
CLI::Validator whole_number(bool is_unsigned) {
  return CLI::Validator(
      [is_unsigned](std::string& s) -> std::string {
        std::string_view v = s;
        bool negative = false;
        if (!v.empty() && (v.front() == '-' || v.front() == '+')) {
          negative = v.front() == '-';
          v.remove_prefix(1);
        }
        if (v.empty() || v.find_first_not_of("0123456789") != std::string_view::npos) {
          return quote(s) + " is not a whole number";
        }
        while (v.size() > 1 && v.front() == '0') v.remove_prefix(1);  // decimal, whatever its leading zeros
        const bool zero = v == "0";
        if (is_unsigned && negative && !zero) return quote(s) + " is negative; this option takes a count";
        const std::string text = (negative && !zero ? "-" : "") + std::string(v);
        if (is_unsigned) {
          std::uint64_t x = 0;
          const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
          if (ec != std::errc() || end != text.data() + text.size()) {
            return fmt::format("'{}' is out of range (at most {})", shortened(s), std::numeric_limits<std::uint64_t>::max());
          }
        } else {
          std::int64_t x = 0;
          const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
          if (ec != std::errc() || end != text.data() + text.size()) {
            return fmt::format("'{}' is out of range ({}..{})", shortened(s), std::numeric_limits<std::int64_t>::min(),
                               std::numeric_limits<std::int64_t>::max());
          }
        }
        s = text;
        return {};
      },
      "", "whole-number");
}

// A number with a fraction: finite.
const CLI::Validator& finite_number() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double x = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end != '\0') return {};  // not a number: CLI11's own message says so
        if (!std::isfinite(x) || errno == ERANGE) {
          if (std::isfinite(x) && x != 0.0) return {};  // a denormal: finite, the option's own range judges it
          return quote(s) + " is not a finite number";
        }
        return {};
      },
      "", "finite-number");
  return v;
}

// Where a path's file would go: its folder, "." for a bare name.
fs::path folder_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

// A folder files are to be written into: it is one, and it can be.
std::string check_folder(const std::string& s, const fs::path& folder) {
  struct stat st{};
  if (::stat(folder.c_str(), &st) != 0) return s + ": its folder " + folder.string() + " does not exist";
  if (!S_ISDIR(st.st_mode)) return s + ": " + folder.string() + " is a file, not a folder";
  if (::access(folder.c_str(), W_OK | X_OK) != 0) return s + ": cannot write into " + folder.string() + ": " + std::strerror(errno);
  return {};
}

// A file the command writes (the writer does not make its folder), or a
// directory it writes into (made with its parents, as mkdir -p).
std::string check_output(const std::string& s, bool directory) {
  if (s.empty()) return "must not be empty";
  struct stat st{};
  if (::stat(s.c_str(), &st) == 0) {
    if (directory) {
      if (!S_ISDIR(st.st_mode)) return s + " is a file, not a directory to write into";
      return check_folder(s, s);
    }
    if (S_ISDIR(st.st_mode)) return s + " is a directory; give a file name";
    if (::access(s.c_str(), W_OK) != 0) return s + ": cannot be written: " + std::strerror(errno);
    return {};
  }
  if (!directory) return check_folder(s, folder_of(s));
  // The nearest folder that exists is where the new ones are made.
  fs::path folder = folder_of(s);
  std::error_code ec;
  while (!fs::exists(folder, ec) && folder.has_parent_path() && folder != folder.parent_path()) folder = folder.parent_path();
  if (!fs::exists(folder, ec)) folder = ".";
  return check_folder(s, folder);
}

bool has_validator(CLI::Option* opt, const char* name) {
  for (int i = 0;; ++i) {
    try {
      if (opt->get_validator(i)->get_name() == name) return true;
    } catch (const CLI::OptionNotFound&) {
      return false;
    }
  }
}

std::string option_label(const CLI::Option* opt) {
  const std::vector<std::string>& longs = opt->get_lnames();
  return longs.empty() ? opt->get_name() : "--" + longs.front();
}

// After parsing, before anything runs: each output option's path can be
// what it names (check_output), and a file it names is not one that
// another option of the same command line reads (the platform file as
// --trace, say). An unusable path is an OutputError of status 2, as the
// writer's own are (Python: OSError).
void check_outputs(const CLI::App& command) {
  struct Named {
    std::string option, path;
    dev_t dev;
    ino_t ino;
  };
  std::vector<Named> inputs, outputs;
  for (const CLI::Option* copt : command.get_options()) {
    auto* opt = const_cast<CLI::Option*>(copt);
    if (opt->count() == 0) continue;
    const bool file = has_validator(opt, kOutputFile), dir = has_validator(opt, kOutputDir);
    for (const std::string& value : opt->results()) {
      if (file || dir) {
        if (const std::string why = check_output(value, dir); !why.empty()) throw OutputError(option_label(opt) + ": " + why, 2);
      }
      struct stat st{};
      if (value.empty() || ::stat(value.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (!dir) (file ? outputs : inputs).push_back({option_label(opt), value, st.st_dev, st.st_ino});
    }
  }
  for (const Named& o : outputs) {
    for (const Named& i : inputs) {
      if (o.dev == i.dev && o.ino == i.ino) {
        throw OutputError(o.option + ": " + o.path + " is the file " + i.option + " reads; give another file to write", 2);
      }
    }
  }
}

}  // namespace

// Markers check_outputs() finds the output options by; as validators they
// only refuse an empty value.
const CLI::Validator& output_file() {
  static const CLI::Validator v([](std::string& s) { return s.empty() ? std::string("must not be empty") : std::string(); }, "",
                                kOutputFile);
  return v;
}

const CLI::Validator& output_dir() {
  static const CLI::Validator v([](std::string& s) { return s.empty() ? std::string("must not be empty") : std::string(); }, "",
                                kOutputDir);
  return v;
}

void add_option_checks(CLI::App& command) {
  for (CLI::Option* opt : command.get_options()) {
    const std::string type = opt->get_type_name();
    if (type == "INT" || type == "UINT") {
      opt->transform(whole_number(type == "UINT"));
    } else if (type == "FLOAT") {
      opt->check(finite_number());
    }
  }
  CLI::App* app = &command;
  command.parse_complete_callback([app] { check_outputs(*app); });
  for (CLI::App* sub : command.get_subcommands([](CLI::App*) { return true; })) add_option_checks(*sub);
}

}  // namespace acesim::cli
