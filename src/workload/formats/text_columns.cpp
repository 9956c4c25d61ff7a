// Whitespace-separated columns (text_columns.h).
#include "workload/formats/text_columns.h"

namespace acesim {

std::vector<TextToken> split_columns(const std::string& line) {
  std::vector<TextToken> out;
  std::size_t i = 0;
  const auto blank = [&](std::size_t k) { return line[k] == ' ' || line[k] == '\t' || line[k] == '\r'; };
  while (i < line.size()) {
    while (i < line.size() && blank(i)) ++i;
    if (i >= line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !blank(i)) ++i;
    out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char ch : text) {
    if (ch == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(ch);
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

}  // namespace acesim
