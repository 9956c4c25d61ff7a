// Golden whole-run outputs: every case of cases.txt runs the acesim binary
// and must print (or write) exactly what expected/ holds, byte for byte.
// A refactor keeps them all; a deliberate change of results regenerates them
// with ACESIM_UPDATE_GOLDEN=1 (scripts/update-golden.sh) and says so.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_runner.h"

namespace acesim::test {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string name;
  std::vector<std::string> files;  // empty: standard output
  std::vector<std::string> args;
};

fs::path golden_dir() { return fs::path(source_dir()) / "tests" / "golden"; }

std::vector<GoldenCase> read_cases() {
  std::vector<GoldenCase> cases;
  std::ifstream in(golden_dir() / "cases.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    GoldenCase c;
    std::string head = line.substr(0, colon);
    if (const std::size_t at = head.find('@'); at != std::string::npos) {
      std::stringstream files(head.substr(at + 1));
      std::string f;
      while (std::getline(files, f, ',')) c.files.push_back(f);
      head = head.substr(0, at);
    }
    c.name = head;
    std::stringstream words(line.substr(colon + 2));
    std::string w;
    while (words >> w) c.args.push_back(w);
    cases.push_back(std::move(c));
  }
  return cases;
}

bool updating() {
  const char* v = std::getenv("ACESIM_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

void check_or_update(const fs::path& expected_path, const std::string& actual) {
  if (updating()) {
    fs::create_directories(expected_path.parent_path());
    std::ofstream(expected_path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path)) << expected_path << " is missing (scripts/update-golden.sh writes it)";
  const std::string expected = slurp(expected_path);
  if (expected == actual) return;
  // The first differing line, to say where.
  std::istringstream e(expected), a(actual);
  std::string le, la;
  int n = 1;
  while (std::getline(e, le) && std::getline(a, la) && le == la) ++n;
  ADD_FAILURE() << expected_path.filename() << " differs first at line " << n << ":\n  expected: " << le
                << "\n  actual:   " << la;
}

class GoldenTest : public ScratchDirTest, public ::testing::WithParamInterface<GoldenCase> {};

TEST_P(GoldenTest, OutputIsUnchanged) {
  const GoldenCase& c = GetParam();
  std::string cmd = "cd " + shell_quote(source_dir()) + " && timeout 300 " + shell_quote(acesim_binary());
  for (std::string a : c.args) {
    if (const std::size_t p = a.find("{out}"); p != std::string::npos) a.replace(p, 5, (dir_ / "out").string());
    cmd += " " + shell_quote(a);
  }
  const fs::path out = dir_ / "stdout.txt";
  const fs::path err = dir_ / "stderr.txt";
  cmd += " </dev/null >" + shell_quote(out.string()) + " 2>" + shell_quote(err.string());
  const int raw = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << cmd << "\n" << slurp(err);
  const fs::path expected = golden_dir() / "expected";
  if (c.files.empty()) {
    check_or_update(expected / (c.name + ".out"), slurp(out));
    return;
  }
  for (const std::string& f : c.files) check_or_update(expected / (c.name + "." + f), slurp(dir_ / "out" / f));
}

INSTANTIATE_TEST_SUITE_P(Whole, GoldenTest, ::testing::ValuesIn(read_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& param) {
                           std::string n = param.param.name;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace acesim::test
