// JSON from a program (cli/json_input.h): what the Python module's native
// half reads. Nesting past the limit and whole numbers past int64 are
// refused naming the key path; nothing recurses, so 60,000 levels (which
// crashed the interpreter) are a one-line error.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli/json_input.h"
#include "config/input_error.h"

namespace acesim::cli {
namespace {

// `levels` maps, each the only value of the one above, as JSON text.
std::string nested(int levels) {
  std::string text;
  for (int i = 0; i < levels; ++i) text += "{\"a\":";
  text += "1";
  return text + std::string(static_cast<std::size_t>(levels), '}');
}

std::string error_of(const std::string& text) {
  try {
    parse_json_input(text, "options");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string repeat(const std::string& part, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += part;
  return s;
}

TEST(JsonInput, ReadsWhatJsonSays) {
  EXPECT_EQ(parse_json_input(R"({"bytes": 67108864, "dims": [0, 2], "x": -1.5, "f": true, "n": null})", "options"),
            nlohmann::json::parse(R"({"bytes": 67108864, "dims": [0, 2], "x": -1.5, "f": true, "n": null})"));
  EXPECT_EQ(parse_json_input("9223372036854775807", "v"), nlohmann::json(9223372036854775807LL));
  EXPECT_EQ(parse_json_input("-9223372036854775808", "v").get<long long>(), -9223372036854775807LL - 1);
  EXPECT_EQ(parse_json_input("1e300", "v").get<double>(), 1e300);
}

TEST(JsonInput, NestingIsLimitedTo64Levels) {
  EXPECT_EQ(kMaxJsonDepth, 64);
  EXPECT_EQ(parse_json_input(nested(64), "options"), nlohmann::json::parse(nested(64)));
  EXPECT_EQ(error_of(nested(65)), "options" + repeat(".a", 64) + ": nested more than 64 levels of lists and maps deep");
  // 60,000 levels: refused at level 65, never built.
  EXPECT_EQ(error_of(nested(60000)), "options" + repeat(".a", 64) + ": nested more than 64 levels of lists and maps deep");
  const std::string lists = std::string(60000, '[') + std::string(60000, ']');
  EXPECT_EQ(error_of(R"({"platform": {"topology": [{}, )" + lists + "]}}"),
            "options.platform.topology.1" + repeat(".0", 61) + ": nested more than 64 levels of lists and maps deep");
}

TEST(JsonInput, WholeNumbersBeyondInt64AreRefused) {
  // Read as a double, 2**70 reached the command line as
  // "1.1805916207174113e+21" ("unknown unit 'e+21'").
  EXPECT_EQ(error_of(R"({"bytes": 1180591620717411303424})"),
            "options.bytes: 1180591620717411303424 is too large: at most 9223372036854775807");
  EXPECT_EQ(error_of(R"({"bytes": 9223372036854775808})"),
            "options.bytes: 9223372036854775808 is too large: at most 9223372036854775807");
  EXPECT_EQ(error_of(R"({"dims": [0, -9223372036854775809]})"),
            "options.dims.1: -9223372036854775809 is too small: at least -9223372036854775808");
}

TEST(JsonInput, TextThatIsNotJsonIsRefused) {
  EXPECT_EQ(error_of("{").rfind("options: not JSON ([json.exception.parse_error.101] parse error at line 1, column 2", 0), 0u)
      << error_of("{");
  EXPECT_EQ(error_of("1e999"), "options: not JSON ([json.exception.out_of_range.406] number overflow parsing '1e999')");
  EXPECT_NE(error_of(R"({"bytes": "\ud800"})").find("options: not JSON ("), std::string::npos);
  EXPECT_NE(error_of("{} {}").find("options: not JSON ("), std::string::npos);
}

}  // namespace
}  // namespace acesim::cli
