// The data files the reproduction studies read (tests/data/.../*.csv), and
// the files they write:
// comma-separated fields, blank lines and `#` lines skipped (the `#` lines
// carry a table's source), the first other line a header naming the columns.
#pragma once

#include <string>
#include <vector>

#include "config/output_file.h"

namespace acesim {

struct DataTable {
  std::vector<std::string> comments;  // the `#` lines, as written
  std::vector<std::string> header;    // the column names, as written
  struct Row {
    int line = 0;  // in the file, from 1
    std::vector<std::string> fields;
  };
  std::vector<Row> rows;  // after the header, each with exactly the header's number of fields
};

// Throws InputError: "PATH: cannot open" followed by `hint`, a row with the
// wrong number of fields (naming the file, line and the header), no rows.
DataTable read_data_table(const std::string& path, const std::string& hint = "");

// A field as a finite number; throws InputError naming `where` and the text.
double data_number(const std::string& text, const std::string& where);

// A study's output file out_dir/name, the directory created if needed;
// close() it when written. Throws OutputError (config/output_file.h).
OutputFile open_study_file(const std::string& out_dir, const std::string& name);

}  // namespace acesim
