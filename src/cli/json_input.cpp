#include "cli/json_input.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "config/input_error.h"
#include "registry/quote.h"

namespace acesim::cli {
namespace {

using Json = nlohmann::json;
using DomParser = nlohmann::detail::json_sax_dom_parser<Json>;

// nlohmann's own tree builder (its parser does not recurse), with the
// checks on the way: each event is checked before the builder takes it, so
// a refused value is never built.
class CheckedParser : public DomParser {
 public:
  CheckedParser(Json& tree, const std::string& what) : DomParser(tree), what_(what) {}

  bool null() {
    item();
    return DomParser::null();
  }
  bool boolean(bool v) {
    item();
    return DomParser::boolean(v);
  }
  bool number_integer(number_integer_t v) {
    item();
    return DomParser::number_integer(v);
  }
  bool number_unsigned(number_unsigned_t v) {
    item();
    if (v > static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max())) out_of_range(std::to_string(v));
    return DomParser::number_unsigned(v);
  }
  bool number_float(number_float_t v, const string_t& text) {
    item();
    // A whole number too large for an integer, which nlohmann reads as a
    // float (one beyond a double's range is its own parse error).
    if (text.find_first_of(".eE") == string_t::npos) out_of_range(text);
    return DomParser::number_float(v, text);
  }
  bool string(string_t& v) {
    item();
    return DomParser::string(v);
  }
  bool start_object(std::size_t n) {
    open(false);
    return DomParser::start_object(n);
  }
  bool key(string_t& k) {
    levels_.back().name = k;
    return DomParser::key(k);
  }
  bool end_object() {
    levels_.pop_back();
    return DomParser::end_object();
  }
  bool start_array(std::size_t n) {
    open(true);
    return DomParser::start_array(n);
  }
  bool end_array() {
    levels_.pop_back();
    return DomParser::end_array();
  }

 private:
  // An open list or map, and the name of the item in it being read: its
  // key, or its index in a list.
  struct Level {
    bool list = false;
    std::size_t items = 0;
    std::string name;
  };

  // A value begins: in a list, it is the next item.
  void item() {
    if (!levels_.empty() && levels_.back().list) levels_.back().name = std::to_string(levels_.back().items++);
  }
  void open(bool list) {
    item();
    if (levels_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      fail("nested more than " + std::to_string(kMaxJsonDepth) + " levels of lists and maps deep");
    }
    levels_.push_back({list, 0, {}});
  }
  [[noreturn]] void out_of_range(const std::string& text) const {
    if (text.starts_with('-')) {
      fail(text + " is too small: at least " + std::to_string(std::numeric_limits<std::int64_t>::min()));
    }
    fail(text + " is too large: at most " + std::to_string(std::numeric_limits<std::int64_t>::max()));
  }
  [[noreturn]] void fail(const std::string& problem) const {
    std::string path = what_;
    for (const Level& l : levels_) path += "." + shortened(l.name);  // a key may be megabytes
    throw InputError(path + ": " + problem);
  }

  std::string what_;
  std::vector<Level> levels_;
};

}  // namespace

nlohmann::json parse_json_input(std::string_view text, const std::string& what) {
  Json root;
  CheckedParser parser(root, what);
  try {
    Json::sax_parse(text, &parser);
  } catch (const Json::exception& e) {
    throw InputError(what + ": not JSON (" + e.what() + ")");
  }
  return root;
}

}  // namespace acesim::cli
