// Whitespace-separated columns of text workload files (ASTRA-sim 1.0 and
// SimAI layer tables): each token with its 1-based column, for errors that
// point at it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace acesim {

struct TextToken {
  std::string text;
  int column = 0;  // 1-based
};

// The tokens of one line, split at spaces, tabs and carriage returns.
std::vector<TextToken> split_columns(const std::string& line);
// The lines of a file's text (without their newlines; a last line without one counts).
std::vector<std::string> split_lines(std::string_view text);

}  // namespace acesim
