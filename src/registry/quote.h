// Quoting a value in a message. A value typed on the command line or passed
// by a program may be megabytes (a 50 MB model name, path or key), and a
// message is one line: every message that quotes user input quotes at most
// the first kMaxQuoted bytes of it. A path is named whole, since the user
// must see which file (a path is at most 4096 bytes; cli/invoke.cpp's
// current_error() cuts any value past 1 KiB in a message the same way).
// (registry/ is the lowest layer: any folder may include this.)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace acesim {

// The most bytes of a value a message quotes.
inline constexpr std::size_t kMaxQuoted = 80;

// `value` as messages quote it: 'value', or, when longer than kMaxQuoted
// bytes, its first kMaxQuoted bytes (cut before a UTF-8 character that does
// not fit) and "...": 'aaaa...'. Control characters and bytes that are not
// UTF-8 are shown as \xNN, so that a NUL does not cut the message short.
std::string quote(std::string_view value);
// `value` shortened the same way, unquoted (a key in a key path).
std::string shortened(std::string_view value);

}  // namespace acesim
