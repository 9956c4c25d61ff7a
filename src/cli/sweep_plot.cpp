// `acesim sweep plot` (cli/sweep.h): the points of a sweep directory as
// series, drawn by scripts/plot_sweep.py with matplotlib.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "cli/sweep.h"
#include "config/input_error.h"
#include "config/output_file.h"
#include "config/units.h"
#include "registry/quote.h"
#include "registry/registry.h"
#include "reproduce/plot_script.h"

namespace acesim::cli::sweep {
namespace {

// A number: the value itself, a number written as text, or a size (64MiB).
std::optional<double> number_of(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0' && std::isfinite(d)) return d;
  if (const auto bytes = parse_bytes(s, nullptr)) return static_cast<double>(*bytes);
  return std::nullopt;
}

std::string file_part(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  return s;
}

// --out: a PNG's name in a folder that exists (matplotlib would add .png to
// a name without it, write another format for another extension, and fail
// with a traceback for a folder that is not there).
void check_png(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(out, ec)) {
    throw InputError("--out: " + out + " is a directory; give the PNG's file name (" + (fs::path(out) / "plot.png").string() + ")");
  }
  std::string ext = fs::path(out).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".png") {
    throw InputError("--out: '" + out + "' is not a .png file name (the plot is a PNG)");
  }
  const fs::path folder = fs::path(out).parent_path();
  if (!folder.empty() && !fs::is_directory(folder, ec)) {
    throw InputError("--out: no folder " + folder.string() + " for " + out + " (make it first)");
  }
}

}  // namespace

std::string plot(const PlotRequest& r) {
  if (!r.out.empty()) check_png(r.out);
  const SweepDir d = read_sweep_dir(r.dir);
  std::vector<std::string> axes;
  for (const nlohmann::json& a : d.meta.at("axes")) axes.push_back(a.get<std::string>());
  // Every record's columns; the names any record has.
  std::vector<std::map<std::string, nlohmann::json>> rows;
  std::vector<std::string> names = axes;
  std::set<std::string> known(axes.begin(), axes.end());
  for (const auto& [point, rec] : d.records) {
    if (!rec.contains("result")) continue;  // error rows
    std::map<std::string, nlohmann::json> row;
    for (const std::string& a : axes) row[a] = rec["params"].contains(a) ? rec["params"][a] : nlohmann::json(nullptr);
    for (auto& [name, value] : flatten_metrics(rec["result"], axes)) {
      if (known.insert(name).second) names.push_back(name);
      row[name] = value;
    }
    rows.push_back(std::move(row));
  }
  auto need = [&](const std::string& flag, const std::string& name) {
    if (!known.count(name)) {
      throw InputError(flag + ": " + quote(name) + " is no axis or metric of " + r.dir + suggestion(name, names));
    }
  };
  need("--x", r.x);
  need("--y", r.y);
  if (!r.hue.empty()) need("--hue", r.hue);
  std::vector<std::pair<std::string, std::string>> where;
  for (const std::string& w : r.where) {
    const std::size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--where: " + quote(w) + " is not KEY=VALUE");
    need("--where", w.substr(0, eq));
    where.emplace_back(w.substr(0, eq), w.substr(eq + 1));
  }
  auto kept = [&](const std::map<std::string, nlohmann::json>& row) {
    for (const auto& [k, v] : where) {
      const auto it = row.find(k);
      if (it == row.end() || value_text(it->second) != v) return false;
    }
    return true;
  };
  // The x axis: numbers (or sizes) when every value is one, else categories
  // in the order they first appear.
  bool numeric = true;
  std::vector<std::string> categories;
  std::size_t kept_rows = 0;
  for (const auto& row : rows) {
    if (!kept(row) || !row.count(r.x) || !row.count(r.y)) continue;
    ++kept_rows;
    if (!number_of(row.at(r.x))) numeric = false;
    const std::string t = value_text(row.at(r.x));
    if (std::find(categories.begin(), categories.end(), t) == categories.end()) categories.push_back(t);
    if (!number_of(row.at(r.y))) throw InputError("--y: " + quote(r.y) + " is not a number (" + quote(value_text(row.at(r.y))) + ")");
  }
  if (kept_rows == 0) throw InputError("sweep plot: no point of " + r.dir + " has both --x and --y" + (where.empty() ? "" : " (after --where)"));
  // Series by hue; two points at one x in a series mean another axis varies.
  std::map<std::string, std::vector<std::pair<double, double>>> series;  // by hue text, x key -> y
  std::vector<std::string> hue_order;
  std::map<std::string, std::set<std::string>> xs_seen;
  for (const auto& row : rows) {
    if (!kept(row) || !row.count(r.x) || !row.count(r.y)) continue;
    const std::string hue = r.hue.empty() ? "" : value_text(row.count(r.hue) ? row.at(r.hue) : nlohmann::json(nullptr));
    if (!series.count(hue)) hue_order.push_back(hue);
    const std::string xt = value_text(row.at(r.x));
    if (!xs_seen[hue].insert(xt).second) {
      std::vector<std::string> varying;
      for (const std::string& a : axes) {
        if (a == r.x || a == r.hue) continue;
        bool fixed = false;
        for (const auto& [k, v] : where) fixed = fixed || k == a;
        if (!fixed) varying.push_back(a);
      }
      throw InputError("sweep plot: several points at " + r.x + "=" + xt + (hue.empty() ? "" : " (" + r.hue + "=" + hue + ")") +
                       "; keep one with --where KEY=VALUE or split them with --hue (other axes: " + join_names(varying, ", ") + ")");
    }
    const double x = numeric ? *number_of(row.at(r.x)) : static_cast<double>(
                                   std::find(categories.begin(), categories.end(), xt) - categories.begin());
    series[hue].emplace_back(x, *number_of(row.at(r.y)));
  }
  nlohmann::json data;
  data["series"] = nlohmann::json::array();
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  bool powers_of_two = true;
  for (const std::string& h : hue_order) {
    std::vector<std::pair<double, double>> pts = series[h];
    if (numeric) std::sort(pts.begin(), pts.end());
    nlohmann::json xs = nlohmann::json::array();
    nlohmann::json ys = nlohmann::json::array();
    for (const auto& [x, y] : pts) {
      if (numeric) {
        xs.push_back(x);
        xmin = std::min(xmin, x);
        xmax = std::max(xmax, x);
        powers_of_two = powers_of_two && x > 0 && std::exp2(std::round(std::log2(x))) == x;
      } else {
        xs.push_back(categories[static_cast<std::size_t>(x)]);
      }
      ys.push_back(y);
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
    data["series"].push_back({{"name", r.hue.empty() ? "" : h}, {"x", xs}, {"y", ys}});
  }
  const bool logx = numeric && xmin > 0 && xmax / xmin >= 64;
  const std::string out =
      !r.out.empty() ? r.out : (std::filesystem::path(r.dir) / (file_part(r.y) + "-vs-" + file_part(r.x) + ".png")).string();
  data["categories"] = numeric ? nlohmann::json::array() : nlohmann::json(categories);
  data["logx"] = logx;
  data["log2"] = logx && powers_of_two;
  data["logy"] = ymin > 0 && ymax / ymin >= 1000;
  data["xlabel"] = r.x;
  data["ylabel"] = r.y;
  data["hue"] = r.hue;
  std::string title = d.meta.at("grid").at("command").get<std::string>() + " sweep: " + r.y + " against " + r.x;
  for (const auto& [k, v] : where) title += ", " + k + "=" + v;
  data["title"] = title;
  data["out"] = std::filesystem::absolute(out).string();
  const std::string data_path = (std::filesystem::path(r.dir) / "plot.json").string();
  write_dir_file(data_path, data.dump(2) + "\n");
  std::string output;
  if (run_embedded_script(r.dir, "scripts/plot_sweep.py", {data_path}, output) != 0) {
    for (char& c : output) c = c == '\n' ? ' ' : c;
    // Not a bug of acesim: the plot could not be made (matplotlib missing,
    // or the PNG not written: a full disk).
    throw OutputError("sweep plot: " + out + ": not made: python3 with matplotlib failed (Debian's python3-matplotlib): " + output, 1);
  }
  return out;
}

}  // namespace acesim::cli::sweep
