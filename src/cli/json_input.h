// JSON handed to the commands by a program rather than typed: the Python
// module's options, grids and reports (docs/python.md). Read without
// recursion and checked before anything walks the tree recursively (the
// sweep's platform text, its YAML, the metrics' flattening), so no input
// exhausts the stack.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace acesim::cli {

// The most levels of lists and maps one value may nest (the outermost
// counts as one). Platform files nest four or five.
inline constexpr int kMaxJsonDepth = 64;

// `text` as JSON, checked: at most kMaxJsonDepth levels of lists and maps,
// and whole numbers within int64 (a larger one would reach the command line
// as a float's text, 1.1805916207174113e+21). Throws InputError
// "WHAT.PATH: problem", PATH the dotted keys and list indices down to the
// culprit; text that is not JSON is "WHAT: not JSON (...)".
nlohmann::json parse_json_input(std::string_view text, const std::string& what);

}  // namespace acesim::cli
