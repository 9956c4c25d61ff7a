#include "config/data_table.h"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "config/input_error.h"
#include "config/platform.h"

namespace acesim {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, ',')) f.push_back(item);
  if (!line.empty() && line.back() == ',') f.emplace_back();  // a last empty field
  return f;
}

}  // namespace

DataTable read_data_table(const std::string& path, const std::string& hint) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const InputError& e) {
    throw InputError(e.what() + hint);
  }
  std::istringstream in(text);
  DataTable t;
  std::string line, header;
  std::size_t columns = 0;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
    if (!line.empty() && line[0] == '#') t.comments.push_back(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = split(line);
    if (columns == 0) {
      header = line;
      columns = f.size();
      t.header = f;
      continue;
    }
    if (f.size() != columns) {
      throw InputError(fmt::format("{}:{}: expected {} fields ({}), got {}", path, line_no, columns, header, f.size()));
    }
    t.rows.push_back({line_no, std::move(f)});
  }
  if (t.rows.empty()) throw InputError(path + ": no rows");
  return t;
}

double data_number(const std::string& text, const std::string& where) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw InputError(where + ": '" + text + "' is not a number");
}

OutputFile open_study_file(const std::string& out_dir, const std::string& name) {
  create_output_directory(out_dir, "--out");
  return OutputFile(out_dir + "/" + name, "--out");
}

}  // namespace acesim
