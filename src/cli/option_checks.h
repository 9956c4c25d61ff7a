// Checks every command's options get, in one place, when a command line is
// parsed (before anything is read or simulated):
// - whole numbers are decimal and in range: CLI11 reads them with
//   strtoll(base 0), which clamps 2^64 to 2^63-1 silently and reads "010"
//   as 8 and "0x10" as 16; here leading zeros are dropped (010 is 10) and
//   anything else is refused with the option's range;
// - numbers with a fraction are finite (no nan, inf or 1e999);
// - what a command writes (output_file(), output_dir()) is a usable path,
//   and not one of the files the same command line reads.
#pragma once

#include <CLI/CLI.hpp>

namespace acesim::cli {

// An option naming a file the command writes (--trace, calibrate --out):
// not empty, not a directory, its folder one that exists and can be
// written, and not a file another option of the command line reads.
const CLI::Validator& output_file();
// An option naming a directory the command writes into (--csv, --out): not
// empty, not an existing file, and the nearest folder that exists one
// that can be written. Both are checked once the command line is parsed,
// before anything runs; a path that cannot be used is an OutputError of
// status 2 (config/output_file.h), as the writer's own, and OSError in
// Python.
const CLI::Validator& output_dir();

// Adds the number checks to every option of `command` (and its
// subcommands), and a check after parsing that no output option names a
// file another of its options reads. Called on each command right after it
// registers its options (the CLI and in-process invocation alike).
void add_option_checks(CLI::App& command);

}  // namespace acesim::cli
