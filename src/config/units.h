// Sizes and numbers as users write them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acesim {

// "1048576", "64MiB", "1 GiB", "1.5GB", "512KB", "8B". KiB/MiB/GiB/TiB are
// powers of 1024, KB/MB/GB/TB powers of 1000. A bare K/M/G is refused as
// ambiguous. Returns the byte count, or an error message in `error`.
std::optional<std::uint64_t> parse_bytes(std::string_view text, std::string* error = nullptr);

// Bytes per element of a precision name (fp8, fp16, bf16, fp32), or nullopt.
std::optional<int> parse_precision(std::string_view name);
// The valid precision names, for messages.
std::vector<std::string> precision_names();

// Human form for tables: "64 MiB", "1 GiB", "1000 B".
std::string format_bytes(std::uint64_t bytes);

}  // namespace acesim
