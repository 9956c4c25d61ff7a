// `acesim reproduce astra-sim-2.0`: acesim against ASTRA-sim 2.0 on
// ASTRA-sim's own example microbenchmarks (docs/validation.md, "ASTRA-sim
// 2.0 microbenchmarks"). Every row runs the same Chakra traces and
// network/system files through both of acesim's backends and sets them
// beside ASTRA-sim's two analytical backends; where the two simulators model
// something differently, the row names the difference and, where it has a
// closed form, acesim's figure with ASTRA-sim's choice applied.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace acesim {

// A known modelling difference between ASTRA-sim 2.0 and acesim.
enum class AstraDifference {
  // ASTRA-sim charges each reduction step 3 x message / local-mem-bw (read
  // two operands, write the sum) in series with the transfer; acesim's
  // `ideal` executor charges the endpoint nothing.
  kReductionMemory,
  // ASTRA-sim's ring all-to-all takes n(n-1)/2 steps of 1/n of the data;
  // acesim's store-and-forward ring takes n-1 steps carrying the same bytes.
  kAllToAllSteps,
  // ASTRA-sim's congestion-aware backend stores a whole message at a switch
  // before forwarding it; acesim's fluid backend streams it through.
  kStoreAndForward,
  // With several chunks active, ASTRA-sim's congestion-aware links send one
  // message at a time in arrival order, so chunks fall out of step and one's
  // latency hides behind another's transmission; acesim's fluid backend
  // shares a link fairly, so they move together and wait together.
  kFifoLinks,
};

// One letter per difference, as the tables show it (M, A, S, F).
char difference_code(AstraDifference d);

struct AstraComparison {
  double astra_ns = 0.0;   // ASTRA-sim's figure
  double acesim_ns = 0.0;  // acesim's, same inputs
  std::vector<AstraDifference> differences;  // those that apply to this row
  // acesim's figure plus what each difference adds in closed form
  // (docs/validation.md): how far the differences explain the error.
  std::optional<double> adjusted_ns;
  double error() const { return (acesim_ns - astra_ns) / astra_ns; }
};

struct AstraMicrobenchmark {
  std::string op;  // all_reduce, all_gather, reduce_scatter, all_to_all
  int npus = 0;
  std::string network, system;  // file stems
  AstraComparison aware;        // ASTRA-sim congestion-aware vs acesim fluid
  AstraComparison unaware;      // ASTRA-sim congestion-unaware vs acesim analytical
};

// Runs every row of DATA/astra-sim-2.0/results/microbenchmarks.csv on the
// traces DATA/chakra-et/<op>_<n>npus_1MB/<op>.<rank>.et and the files
// DATA/astra-sim-2.0/{network,system}/. Throws InputError naming the file
// that is missing or malformed.
std::vector<AstraMicrobenchmark> run_astra_microbenchmarks(const std::string& data_dir);

// The two tables (congestion-unaware, then congestion-aware) in Markdown,
// as docs/validation.md carries them.
std::string astra_microbenchmark_tables(const std::vector<AstraMicrobenchmark>& rows);

// Writes results.csv and report.md into out_dir (created if needed).
void write_astra_microbenchmarks(const std::vector<AstraMicrobenchmark>& rows, const std::string& out_dir);

}  // namespace acesim
