// `acesim list [FAMILY]`: what can be named where (algorithms, backends, ...),
// straight from the registries.
#include <cstdio>
#include <memory>

#include "api/catalogue.h"
#include "cli/commands.h"
#include "config/input_error.h"
#include "registry/registry.h"

namespace acesim::cli {
namespace {

struct Options {
  std::string family;
  bool markdown = false;
};

int run(const Options& o) {
  if (o.markdown) {
    std::fputs(api::catalogue_markdown().c_str(), stdout);
    return kExitOk;
  }
  bool found = o.family.empty();
  for (const api::CatalogueFamily& f : api::catalogue()) {
    if (!o.family.empty() && f.key != o.family) continue;
    found = true;
    std::printf("%s (%s):\n", f.title.c_str(), f.where.c_str());
    for (const api::CatalogueEntry& e : f.entries) {
      std::string aliases;
      for (const std::string& a : e.aliases) aliases += (aliases.empty() ? " (also " : ", ") + a;
      if (!aliases.empty()) aliases += ")";
      std::printf("  %-20s %s%s\n", e.name.c_str(), e.help.c_str(), aliases.c_str());
    }
  }
  if (!found) throw InputError("list: unknown family '" + o.family + "'" + suggestion(o.family, api::catalogue_keys()));
  return kExitOk;
}

}  // namespace

CommandRunner add_list_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("list", "List what can be named: collective algorithms, network backends, ...");
  c->add_option("family", o->family, join_names(api::catalogue_keys()) + " (default: all)");
  c->add_flag("--markdown", o->markdown, "print the tables of docs/formats.md");
  return {[o] { return run(*o); }, nullptr, nullptr, nullptr};
}

}  // namespace acesim::cli
