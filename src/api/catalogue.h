// Every plug-in family's registered names, for `acesim list`, `--help` and
// the tables of docs/formats.md (which a test keeps equal to
// catalogue_markdown(), so the docs cannot drift from the code).
#pragma once

#include <string>
#include <vector>

namespace acesim::api {

struct CatalogueEntry {
  std::string name;
  std::vector<std::string> aliases;
  std::string help;
};

struct CatalogueFamily {
  std::string key;    // what `acesim list KEY` takes: "algorithms", "backends", ...
  std::string title;  // "Collective algorithms"
  std::string where;  // where a config names one: "collectives.<op>.algorithm"
  std::vector<CatalogueEntry> entries;
};

std::vector<CatalogueFamily> catalogue();
std::vector<std::string> catalogue_keys();
// One markdown table per family, in catalogue order.
std::string catalogue_markdown();

}  // namespace acesim::api
