// Size strings: parse_bytes and format_bytes.
#include "config/units.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace acesim {
namespace {

std::uint64_t bytes_of(const std::string& text) {
  std::string err;
  const auto v = parse_bytes(text, &err);
  EXPECT_TRUE(v.has_value()) << "'" << text << "' refused: " << err;
  return v.value_or(0);
}

// The error message for a refused size; fails the test if it was accepted.
std::string refusal(const std::string& text) {
  std::string err;
  const auto v = parse_bytes(text, &err);
  EXPECT_FALSE(v.has_value()) << "'" << text << "' accepted as " << v.value_or(0);
  EXPECT_FALSE(err.empty()) << "'" << text << "' refused without a message";
  return err;
}

TEST(ParseBytes, PlainNumbersAndB) {
  EXPECT_EQ(bytes_of("0"), 0u);
  EXPECT_EQ(bytes_of("1"), 1u);
  EXPECT_EQ(bytes_of("1048576"), 1048576u);
  EXPECT_EQ(bytes_of("8B"), 8u);
  EXPECT_EQ(bytes_of("8 B"), 8u);
  EXPECT_EQ(bytes_of("  64MiB  "), 64u << 20);
}

TEST(ParseBytes, BinaryUnitsArePowersOf1024) {
  EXPECT_EQ(bytes_of("1KiB"), 1024u);
  EXPECT_EQ(bytes_of("64MiB"), 64ull << 20);
  EXPECT_EQ(bytes_of("1 GiB"), 1ull << 30);
  EXPECT_EQ(bytes_of("2TiB"), 2ull << 40);
}

TEST(ParseBytes, DecimalUnitsArePowersOf1000) {
  EXPECT_EQ(bytes_of("512KB"), 512'000u);
  EXPECT_EQ(bytes_of("1kB"), 1'000u);
  EXPECT_EQ(bytes_of("64MB"), 64'000'000u);
  EXPECT_EQ(bytes_of("1GB"), 1'000'000'000u);
  EXPECT_EQ(bytes_of("3TB"), 3'000'000'000'000ull);
  // The two families really differ.
  EXPECT_NE(bytes_of("1MB"), bytes_of("1MiB"));
}

TEST(ParseBytes, FractionsThatGiveWholeBytes) {
  EXPECT_EQ(bytes_of("1.5KiB"), 1536u);
  EXPECT_EQ(bytes_of("0.1KB"), 100u);
  EXPECT_EQ(bytes_of("1.5GB"), 1'500'000'000u);
  EXPECT_EQ(bytes_of(".5KiB"), 512u);
  EXPECT_EQ(bytes_of("2.000B"), 2u);
  // 4.1 * 1e6 is 4099999.9999999995 in floating point: the parser must not
  // refuse it as a fraction of a byte.
  EXPECT_EQ(bytes_of("4.1MB"), 4'100'000u);
  EXPECT_EQ(bytes_of("0.3GB"), 300'000'000u);
  EXPECT_EQ(bytes_of("1.125KiB"), 1152u);
}

TEST(ParseBytes, FractionsOfAByteAreRefused) {
  EXPECT_NE(refusal("1.5").find("not a whole number of bytes"), std::string::npos);
  EXPECT_NE(refusal("1.5B").find("not a whole number of bytes"), std::string::npos);
  EXPECT_NE(refusal("1.0001KB").find("not a whole number of bytes"), std::string::npos);
  EXPECT_NE(refusal("0.1KiB").find("not a whole number of bytes"), std::string::npos);
}

TEST(ParseBytes, BareKMGAreAmbiguous) {
  for (const char* s : {"64M", "64K", "1G", "2T", "64m", "8k", "1g", "1t", "64 M"}) {
    const std::string err = refusal(s);
    EXPECT_NE(err.find("ambiguous"), std::string::npos) << s << ": " << err;
  }
  const std::string err = refusal("64M");
  EXPECT_NE(err.find("MiB"), std::string::npos) << err;
  EXPECT_NE(err.find("MB"), std::string::npos) << err;
  // Lower-case letters get the valid (upper-case) spellings suggested.
  const std::string lower = refusal("8k");
  EXPECT_NE(lower.find("KiB"), std::string::npos) << lower;
  EXPECT_EQ(lower.find("kiB"), std::string::npos) << lower;
}

TEST(ParseBytes, GarbageIsRefused) {
  for (const char* s : {"", "   ", "abc", "MiB", "-5", "+5", "1..5", "1.2.3KB", "12XB", "64mib", "1Gb", "1e6",
                        "0x10", "5 MiB extra", "1,024", "nan", "inf"}) {
    refusal(s);
  }
  EXPECT_NE(refusal("12XB").find("unknown unit 'XB'"), std::string::npos);
  EXPECT_NE(refusal("abc").find("is not a size"), std::string::npos);
  EXPECT_NE(refusal("-5").find("is not a size"), std::string::npos);
}

TEST(ParseBytes, MessageQuotesTheInput) {
  EXPECT_NE(refusal("12XB").find("'12XB'"), std::string::npos);
  EXPECT_NE(refusal("64M").find("'64M'"), std::string::npos);
}

TEST(ParseBytes, TooLargeIsRefusedNotWrapped) {
  EXPECT_EQ(bytes_of("8000000TB"), 8'000'000'000'000'000'000ull);
  EXPECT_NE(refusal("10000000TB").find("too large"), std::string::npos);
  EXPECT_NE(refusal("18446744073709551616").find("too many digits"), std::string::npos);
  EXPECT_NE(refusal("99999999999999999999999999KiB").find("too many digits"), std::string::npos);
  refusal("9000000000000000001");
  refusal("16EiB");
}

TEST(ParseBytes, ErrorPointerIsOptional) {
  EXPECT_FALSE(parse_bytes("junk").has_value());
  EXPECT_EQ(parse_bytes("2KiB"), std::optional<std::uint64_t>(2048));
}

TEST(FormatBytes, PicksTheLargestExactBinaryUnit) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1), "1 B");
  EXPECT_EQ(format_bytes(1000), "1000 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1536 B");
  EXPECT_EQ(format_bytes(3 * 1024), "3 KiB");
  EXPECT_EQ(format_bytes(64ull << 20), "64 MiB");
  EXPECT_EQ(format_bytes(1ull << 30), "1 GiB");
  EXPECT_EQ(format_bytes(5ull << 40), "5 TiB");
  EXPECT_EQ(format_bytes(1ull << 50), "1024 TiB");
  EXPECT_EQ(format_bytes(1'000'000), "1000000 B");  // not a whole number of KiB
}

TEST(FormatBytes, RoundTripsThroughParseBytes) {
  for (std::uint64_t b : {0ull, 1ull, 999ull, 1024ull, 4096ull, 1ull << 20, 3ull << 30, 7ull << 40, 12345678ull}) {
    std::string text = format_bytes(b);
    text.erase(text.find(' '), 1);  // "64 MiB" -> "64MiB"; both parse
    EXPECT_EQ(bytes_of(text), b) << text;
    EXPECT_EQ(bytes_of(format_bytes(b)), b);
  }
}

}  // namespace
}  // namespace acesim
