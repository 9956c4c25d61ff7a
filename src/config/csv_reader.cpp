// Reading CSV files (csv_reader.h).
#include "config/csv_reader.h"

#include <algorithm>
#include <cctype>

namespace acesim {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

CsvHeader find_csv_header(std::string& text, bool lower) {
  CsvHeader h;
  for (std::size_t at = 0, line = 1; at < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string trimmed = trim(text.substr(at, end - at));
    if (!trimmed.empty() && trimmed[0] != '#') {
      if (lower) {
        for (std::size_t i = at; i < end; ++i) text[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      }
      h.line = static_cast<int>(line);
      // Column names hold no commas: each as written, without spaces or quotes around it.
      std::string name;
      const std::string header = text.substr(at, end - at);
      for (std::size_t i = 0; i <= header.size(); ++i) {
        if (i == header.size() || header[i] == ',') {
          name = trim(name);
          if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
          h.names.push_back(name);
          name.clear();
        } else {
          name += header[i];
        }
      }
      break;
    }
    at = end + 1;
  }
  return h;
}

void rethrow_csv_error(const std::string& path, int header_line, const std::string& needs) {
  try {
    throw;
  } catch (const io::error::header_missing&) {
    throw InputError(fmt::format("{}: no header line (the header needs {})", path, needs));
  } catch (const io::error::missing_column_in_header& e) {
    throw InputError(fmt::format("{}:{}: missing column '{}' (the header needs {})", path, header_line, e.column_name, needs));
  } catch (const io::error::duplicated_column_in_header& e) {
    throw InputError(fmt::format("{}:{}: column '{}' is given twice in the header", path, header_line, e.column_name));
  } catch (const io::error::too_few_columns& e) {
    throw InputError(fmt::format("{}:{}: fewer fields than the header has columns", path, e.file_line));
  } catch (const io::error::too_many_columns& e) {
    throw InputError(fmt::format("{}:{}: more fields than the header has columns", path, e.file_line));
  } catch (const io::error::escaped_string_not_closed& e) {
    throw InputError(fmt::format("{}:{}: a quoted field is not closed", path, e.file_line));
  } catch (const io::error::base& e) {
    // Any other problem the library finds (a line over its 16 MiB limit).
    static const std::regex kFileName(R"( (in|of) file "[^"]*")");
    throw InputError(fmt::format("{}: {}", path, std::regex_replace(e.what(), kFileName, "")));
  }
}

}  // namespace acesim
