#include "compute/kernel_desc.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace acesim {
namespace {

constexpr std::array<std::pair<KernelKind, std::string_view>, kKernelKinds> kKinds = {{
    {KernelKind::kGemm, "gemm"},
    {KernelKind::kAttentionForward, "attention-forward"},
    {KernelKind::kAttentionBackward, "attention-backward"},
    {KernelKind::kNorm, "norm"},
    {KernelKind::kActivation, "activation"},
    {KernelKind::kRope, "rope"},
    {KernelKind::kResidual, "residual"},
    {KernelKind::kSoftmax, "softmax"},
    {KernelKind::kDropout, "dropout"},
    {KernelKind::kCrossEntropy, "cross-entropy"},
    {KernelKind::kEmbedding, "embedding"},
    {KernelKind::kOptimizer, "optimizer"},
    {KernelKind::kCast, "cast"},
    {KernelKind::kCopy, "copy"},
    {KernelKind::kPermute, "permute"},
}};

constexpr std::array<std::pair<Dtype, std::string_view>, 3> kDtypes = {{
    {Dtype::kBf16, "bf16"},
    {Dtype::kFp8, "fp8"},
    {Dtype::kFp32, "fp32"},
}};

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A positive finite number, the whole text.
std::optional<double> positive(std::string_view s) {
  double v = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || !(v > 0.0)) return std::nullopt;
  return v;
}

// A kernel's dimension as a shape gives it: a whole number of 1..2^31-1
// (cuBLAS and FlashAttention take int dimensions); 8192.5 or 1e300 is no
// kernel a run has.
std::optional<double> dimension(std::string_view s) {
  const std::optional<double> v = positive(s);
  if (!v || *v != std::floor(*v) || *v > 2147483647.0) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::optional<KernelDesc> parse_dims(KernelKind kind, const std::string& text, std::string& why) {
  const std::vector<std::string_view> parts = split(text, 'x');
  const bool gemm = kind == KernelKind::kGemm;
  if (parts.size() != 2 && !(gemm && (parts.size() == 3 || parts.size() == 4))) {
    why = gemm ? "a GEMM's shape is MxNxK or BxMxNxK" : "a memory-bound kernel's shape is MxN (rows x elements)";
    return std::nullopt;
  }
  std::vector<double> v;
  for (std::string_view p : parts) {
    const std::optional<double> x = dimension(p);
    if (!x) {
      why = fmt::format("'{}' is not a whole number of 1..2147483647", p);
      return std::nullopt;
    }
    v.push_back(*x);
  }
  KernelDesc d;
  d.kind = kind;
  if (!gemm) {
    d.m = v[0];
    d.n = v[1];
    return d;
  }
  if (parts.size() == 2) {
    why = "a GEMM's shape is MxNxK or BxMxNxK";
    return std::nullopt;
  }
  const std::size_t o = parts.size() == 4 ? 1 : 0;
  if (o == 1) d.batch = v[0];
  d.m = v[o];
  d.n = v[o + 1];
  d.k = v[o + 2];
  return d;
}

std::optional<KernelDesc> parse_attention(KernelKind kind, const std::string& text, std::string& why) {
  KernelDesc d;
  d.kind = kind;
  std::optional<bool> causal;
  bool seen[6] = {};
  constexpr std::array<std::string_view, 6> keys = {"b", "h", "kv", "sq", "skv", "d"};
  for (std::string_view word : split(text, ' ')) {
    if (word.empty()) continue;
    if (word == "causal" || word == "full") {
      if (causal) {
        why = "the mask is given twice";
        return std::nullopt;
      }
      causal = word == "causal";
      continue;
    }
    const std::size_t eq = word.find('=');
    const std::string_view key = word.substr(0, eq);
    std::size_t i = 0;
    while (i < keys.size() && keys[i] != key) ++i;
    if (eq == std::string_view::npos || i == keys.size()) {
      why = fmt::format("'{}' is not one of b=, h=, kv=, sq=, skv=, d=, causal, full", word);
      return std::nullopt;
    }
    if (seen[i]) {
      why = fmt::format("{}= is given twice", key);
      return std::nullopt;
    }
    seen[i] = true;
    const std::optional<double> x = dimension(word.substr(eq + 1));
    if (!x) {
      why = fmt::format("{}= takes a whole number of 1..2147483647, got '{}'", key, word.substr(eq + 1));
      return std::nullopt;
    }
    if ((i == 1 || i == 2) && (*x != std::floor(*x) || *x > 1e6)) {
      why = fmt::format("{}= takes a whole number of heads, got '{}'", key, word.substr(eq + 1));
      return std::nullopt;
    }
    switch (i) {
      case 0: d.batch = *x; break;
      case 1: d.heads = static_cast<int>(*x); break;
      case 2: d.kv_heads = static_cast<int>(*x); break;
      case 3: d.m = *x; break;
      case 4: d.n = *x; break;
      default: d.k = *x; break;
    }
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!seen[i]) {
      why = fmt::format("an attention shape needs {}= (b=B h=H kv=G sq=S skv=S d=D causal|full)", keys[i]);
      return std::nullopt;
    }
  }
  if (!causal) {
    why = "an attention shape ends in causal or full";
    return std::nullopt;
  }
  d.causal = *causal;
  return d;
}

// Lookups in a table of (value, name) pairs.
template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E v) {
  for (const auto& [value, name] : table) {
    if (value == v) return name;
  }
  return "?";
}
template <typename E, std::size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  const std::string l = lower(s);
  for (const auto& [value, name] : table) {
    if (name == l) return value;
  }
  return std::nullopt;
}
template <typename E, std::size_t N>
std::vector<std::string> names_of(const std::array<std::pair<E, std::string_view>, N>& table) {
  std::vector<std::string> out;
  for (const auto& kv : table) out.emplace_back(kv.second);
  return out;
}

}  // namespace

std::string_view to_string(KernelKind k) { return name_of(kKinds, k); }
std::optional<KernelKind> parse_kernel_kind(std::string_view s) { return value_of(kKinds, s); }
std::vector<std::string> kernel_kind_names() { return names_of(kKinds); }

std::string_view to_string(Dtype d) { return name_of(kDtypes, d); }
std::optional<Dtype> parse_dtype(std::string_view s) { return value_of(kDtypes, s); }
std::vector<std::string> dtype_names() { return names_of(kDtypes); }

std::string KernelDesc::shape_text() const {
  switch (kind) {
    case KernelKind::kGemm:
      if (batch != 1.0) return fmt::format("{:g}x{:g}x{:g}x{:g}", batch, m, n, k);
      return fmt::format("{:g}x{:g}x{:g}", m, n, k);
    case KernelKind::kAttentionForward:
    case KernelKind::kAttentionBackward:
      return fmt::format("b={:g} h={} kv={} sq={:g} skv={:g} d={:g} {}", batch, heads, kv_heads, m, n, k, causal ? "causal" : "full");
    default: return fmt::format("{:g}x{:g}", m, n);
  }
}

std::optional<KernelDesc> parse_shape(KernelKind kind, std::string_view text, std::string& why) {
  const std::string l = lower(text);
  if (kind == KernelKind::kAttentionForward || kind == KernelKind::kAttentionBackward) return parse_attention(kind, l, why);
  std::string compact;
  for (char c : l) {
    if (c != ' ') compact += c;
  }
  return parse_dims(kind, compact, why);
}

}  // namespace acesim
