// Running the acesim binary from tests: exit status, stdout, stderr, and the
// checks every CLI test makes (bad input: status 2 and one error line).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scratch_dir.h"
#include "test_paths.h"

namespace acesim::test {

struct CliRun {
  int status = -1;  // exit status; -1 if it did not exit normally
  std::string out;
  std::string err;
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::istringstream ss(err);
    std::string l;
    while (std::getline(ss, l)) lines.push_back(l);
    return lines;
  }
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A CSV file acesim wrote (RFC 4180: quoted fields, doubled quotes) as rows
// of named cells; a row with another number of cells than the header fails.
inline std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& path) {
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream in(slurp(path));
  std::string line;
  std::vector<std::string> header;
  auto split = [](const std::string& l) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (std::size_t i = 0; i < l.size(); ++i) {
      const char c = l[i];
      if (quoted && c == '"' && i + 1 < l.size() && l[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.emplace_back();
      } else {
        cells.back() += c;
      }
    }
    return cells;
  };
  while (std::getline(in, line)) {
    if (header.empty()) {
      header = split(line);
      continue;
    }
    const std::vector<std::string> cells = split(line);
    EXPECT_EQ(cells.size(), header.size()) << line;
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

class CliTest : public ScratchDirTest {
 protected:
  // Runs the binary with `args` (no shell interpretation of the arguments).
  CliRun run(const std::vector<std::string>& args) {
    std::string cmd = shell_quote(acesim_binary());
    for (const std::string& a : args) cmd += " " + shell_quote(a);
    const std::filesystem::path out = dir_ / "stdout.txt";
    const std::filesystem::path err = dir_ / "stderr.txt";
    // `timeout` guards against a hang; 124 would show up as the status.
    cmd = "timeout 120 " + cmd + " </dev/null >" + shell_quote(out.string()) + " 2>" + shell_quote(err.string());
    const int raw = std::system(cmd.c_str());
    CliRun r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // Bad input: status 2, nothing on stdout, one stderr line starting with
  // "acesim: error: " and containing each of `parts`.
  void expect_bad_input(const std::vector<std::string>& args, std::initializer_list<std::string> parts) {
    std::string shown;
    for (const std::string& a : args) shown += " " + a;
    SCOPED_TRACE("acesim" + shown);
    const CliRun r = run(args);
    EXPECT_EQ(r.status, 2) << "stderr: " << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << "stderr: " << r.err;
    EXPECT_EQ(lines[0].rfind("acesim: error: ", 0), 0u) << lines[0];
    EXPECT_EQ(r.err.back(), '\n');
    for (const std::string& p : parts) EXPECT_NE(lines[0].find(p), std::string::npos) << lines[0] << "\nmissing: " << p;
    EXPECT_TRUE(r.out.empty()) << "stdout: " << r.out;
  }

  // stdout as JSON; fails the test (and gives an empty object) when it is not.
  static nlohmann::json parse_json(const std::string& text) {
    try {
      return nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not JSON: " << e.what() << "\n" << text;
      return nlohmann::json::object();
    }
  }

  // A good run: status 0 and nothing on stderr.
  CliRun expect_ok(const std::vector<std::string>& args) {
    CliRun r = run(args);
    EXPECT_EQ(r.status, 0) << "stderr: " << r.err;
    EXPECT_TRUE(r.err.empty()) << "stderr: " << r.err;
    return r;
  }
};

}  // namespace acesim::test
