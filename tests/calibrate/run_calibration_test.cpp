// In-situ parameters fitted to measured runs (src/calibrate/run_calibration.h):
// runs whose "measured" steps are acesim's own at known in-situ values give
// those values back; what the report, the calibration file and the CSV say;
// and through the CLI, every bad input is one line with exit status 2.
#include "calibrate/run_calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>

#include "cli_runner.h"
#include "config/input_error.h"

namespace acesim {
namespace {

// Small runs on one or two nodes: several plans, so that the tensor share
// of the step, its length and the GPUs differ from run to run.
const char* const kHeader =
    "id,stack,platform,gpus,model,seq,tp,pp,cp,ep,vp,mbs,gbs,sp,recompute,zero,fetch,overlap,tpoverlap,precision,attention,first,last,"
    "account,step_s,published,where\n";
const char* const kRuns[] = {
    "a,s1,hgx-h100,8,llama3-8b,2048,8,1,1,1,1,1,8,yes,none,1,,no,no,bf16,fused,,,no,{},x,y\n",
    "b,s1,hgx-h100,8,llama3-8b,8192,8,1,1,1,1,1,4,yes,none,1,,no,no,fp8,fused,,,no,{},x,y\n",
    "c,s2,hgx-h100,16,llama3-8b,4096,8,1,1,1,1,1,16,yes,selective,1,,yes,no,bf16,fused,,,no,{},x,y\n",
    "d,s2,hgx-h100,16,llama3-8b,1024,4,1,1,1,1,2,32,no,none,1,,yes,no,bf16,fused,,,no,{},x,y\n",
    "e,s3,hgx-a100,8,llama3-8b,2048,8,1,1,1,1,1,8,yes,none,1,,no,no,bf16,fused,,,no,{},x,y\n",
};

class RunCalibration : public test::CliTest {
 protected:
  // The runs with the steps acesim simulates at `truth` as their measured steps.
  std::string runs_measured_at(const InSituCalibration& truth) {
    return runs_measured_at(truth, std::vector<const char*>(std::begin(kRuns), std::end(kRuns)));
  }
  std::string runs_measured_at(const InSituCalibration& truth, const std::vector<const char*>& runs) {
    std::string text = kHeader;
    for (const char* row : runs) text += fmt::format(fmt::runtime(row), 1.0);
    const std::string probe = write("probe.csv", text);
    LlmRunsFile f = read_llm_runs_file(probe);
    text = kHeader;
    for (std::size_t i = 0; i < f.rows.size(); ++i) {
      simulate_llm_run(f.rows[i], f.models_dir, &truth);
      text += fmt::format(fmt::runtime(runs[i]), fmt::format("{:.9f}", static_cast<double>(f.rows[i].iteration_ps) / 1e12));
    }
    return write("runs.csv", text);
  }
  static InSituCalibration truth(double tensor, double fixed_ms) {
    InSituCalibration c;
    c.file = "truth";
    InSituEntry e;
    e.value[static_cast<std::size_t>(InSituParam::kTensor)] = tensor;
    e.value[static_cast<std::size_t>(InSituParam::kStepFixedMs)] = fixed_ms;
    c.entries.push_back(e);
    return c;
  }
};

TEST_F(RunCalibration, RunsMeasuredAtKnownValuesGiveThemBack) {
  const std::string runs = runs_measured_at(truth(1.12, 20.0));
  RunFitOptions o;
  o.params = {InSituParam::kTensor, InSituParam::kStepFixedMs};
  const RunFit fit = fit_runs(read_llm_runs_file(runs), o);
  ASSERT_EQ(fit.rows.size(), 5u);
  EXPECT_TRUE(fit.converged);
  EXPECT_TRUE(fit.warnings.empty()) << fit.warnings.front();
  // The step is nearly linear in the kernels' factors.
  EXPECT_NEAR(fit.values[InSituParam::kTensor], 1.12, 0.005);
  EXPECT_NEAR(fit.values[InSituParam::kStepFixedMs], 20.0, 1.0);
  EXPECT_EQ(fit.values[InSituParam::kMemory], 1.0);  // not fitted: neutral
  EXPECT_LT(fit.linearisation_error, 0.01);
  for (const RunFitRow& r : fit.rows) {
    SCOPED_TRACE(r.id);
    // Isolated kernels are faster than the "measurement"; the fit is not.
    EXPECT_GT(run_error(r.measured_s, r.isolated_s), 0.05);
    EXPECT_LT(std::abs(run_error(r.measured_s, r.fitted_s)), 0.01);
    EXPECT_LT(std::abs(run_error(r.measured_s, r.loo_s)), 0.02);
  }
  EXPECT_EQ(fit.rows[4].arch, "ampere");
  EXPECT_EQ(fit.rows[1].precision, "fp8");
  // The calibration file gives the fitted parameters to every architecture.
  const InSituCalibration c = parse_calibration(calibration_yaml(fit.calibration()), "cal.yaml");
  EXPECT_NEAR(c.resolve("hopper", "bf16")[InSituParam::kTensor], fit.values[InSituParam::kTensor], 1e-5);
  EXPECT_EQ(c.source, "acesim calibrate runs " + runs + ": 5 runs");
}

TEST_F(RunCalibration, AParameterSplitByArchitectureGivesEachItsOwn) {
  // Hopper's tensor kernels 1.08x in situ, Ampere's 1.18x, the rest 1.13x.
  // Three Ampere runs, four Hopper ones, one Blackwell: too few for a value
  // of its own.
  std::vector<const char*> runs(std::begin(kRuns), std::end(kRuns));
  runs.push_back("f,s3,hgx-a100,16,llama3-8b,2048,8,1,1,1,1,1,16,yes,none,1,,yes,no,bf16,fused,,,no,{},x,y\n");
  runs.push_back("g,s3,hgx-a100,8,llama3-8b,4096,4,1,1,1,1,2,16,no,selective,1,,no,no,bf16,fused,,,no,{},x,y\n");
  runs.push_back("h,s4,hgx-b200,8,llama3-8b,4096,8,1,1,1,1,1,8,yes,none,1,,no,no,bf16,fused,,,no,{},x,y\n");
  InSituCalibration truth;
  truth.file = "truth";
  for (const auto& [arch, tensor] : {std::pair{"", 1.13}, {"hopper", 1.08}, {"ampere", 1.18}}) {
    InSituEntry e;
    e.arch = arch;
    e.value[static_cast<std::size_t>(InSituParam::kTensor)] = tensor;
    truth.entries.push_back(e);
  }
  RunFitOptions o;
  o.params = {InSituParam::kTensor};
  o.split = {InSituParam::kTensor};
  const RunFit fit = fit_runs(read_llm_runs_file(runs_measured_at(truth, runs)), o);
  EXPECT_TRUE(fit.warnings.empty()) << fit.warnings.front();
  std::map<std::string, double> value;
  for (const RunFitSlot& slot : fit.slots) value[slot.name()] = slot.value;
  ASSERT_EQ(value.size(), 2u) << ::testing::PrintToString(value);
  EXPECT_NEAR(value.at("tensor@hopper"), 1.08, 0.005) << format_run_fit(fit);
  EXPECT_NEAR(value.at("tensor@ampere"), 1.18, 0.005);
  // Blackwell's run takes the fit of every run with one shared value.
  EXPECT_GT(fit.values[InSituParam::kTensor], 1.08);
  EXPECT_LT(fit.values[InSituParam::kTensor], 1.18);
  // The file: the shared fit for every architecture, and one entry for each split one.
  const InSituCalibration c = parse_calibration(calibration_yaml(fit.calibration()), "cal.yaml");
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_NEAR(c.resolve("hopper", "bf16")[InSituParam::kTensor], 1.08, 0.005);
  EXPECT_NEAR(c.resolve("ampere", "fp8")[InSituParam::kTensor], 1.18, 0.005);
  EXPECT_NEAR(c.resolve("blackwell", "bf16")[InSituParam::kTensor], fit.values[InSituParam::kTensor], 1e-5);
  EXPECT_NE(c.source.find("; per architecture: tensor"), std::string::npos) << c.source;
  // Held out, each run is predicted from the others with its architecture's value where there is one.
  for (const RunFitRow& r : fit.rows) {
    SCOPED_TRACE(r.id);
    EXPECT_LT(std::abs(run_error(r.measured_s, r.fitted_s)), r.arch == "blackwell" ? 0.05 : 0.01);
  }
  const std::string text = format_run_fit(fit);
  EXPECT_NE(text.find("tensor@ampere"), std::string::npos) << text;
  expect_bad_input({"calibrate", "runs", write("any.csv", std::string(kHeader) + fmt::format(fmt::runtime(kRuns[0]), 1.0)), "--params",
                    "tensor", "--per-arch", "memory"},
                   {"--per-arch: memory is not fitted (--params does not name it)"});
}

TEST_F(RunCalibration, AParameterTheRunsPushPastItsRangeIsHeldThereAndSaidSo) {
  // Steps 60 ms longer than acesim's: more host work than the range allows.
  const std::string runs = runs_measured_at(truth(1.0, 0.0));
  RunFitOptions o;
  o.params = {InSituParam::kStepFixedMs};
  LlmRunsFile f = read_llm_runs_file(runs);
  for (LlmRunRow& r : f.rows) r.step_s += 0.060;
  const RunFit fit = fit_runs(f, o);
  EXPECT_TRUE(fit.at_bound[static_cast<std::size_t>(InSituParam::kStepFixedMs)]);
  EXPECT_EQ(fit.values[InSituParam::kStepFixedMs], 50.0);
  ASSERT_EQ(fit.warnings.size(), 1u);
  EXPECT_EQ(fit.warnings[0],
            "step_fixed_ms is at the bound of its plausible range (50): the runs ask for more than its physical cause explains, or for a "
            "cause the model lacks; the fit holds it there");
  EXPECT_NE(format_run_fit(fit).find("# warning: step_fixed_ms is at the bound"), std::string::npos);
}

TEST_F(RunCalibration, TheCommandWritesACalibrationThatRunTakes) {
  const std::string runs = runs_measured_at(truth(1.1, 10.0));
  const std::string cal = (dir_ / "cal.yaml").string();
  const test::CliRun r = expect_ok({"calibrate", "runs", runs, "--params", "tensor,step_fixed_ms", "--out", cal, "--csv",
                                    (dir_ / "fit.csv").string(), "--jobs", "2"});
  EXPECT_NE(r.out.find("# acesim calibrate runs: " + runs + ", 5 runs; in-situ parameters fitted: tensor, step_fixed_ms"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# wrote " + cal), std::string::npos);
  const auto rows = test::read_csv(dir_ / "fit.csv");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].at("id"), "a");
  EXPECT_EQ(rows[4].at("arch"), "ampere");
  // The same fit, twice: the same bytes, whatever the threads did.
  const test::CliRun again = expect_ok({"calibrate", "runs", runs, "--params", "tensor,step_fixed_ms", "--jobs", "1"});
  EXPECT_EQ(again.out.substr(0, again.out.find("# wrote")), r.out.substr(0, r.out.find("# wrote")));
  const nlohmann::json j = parse_json(expect_ok({"calibrate", "runs", runs, "--params", "tensor", "--json"}).out);
  EXPECT_EQ(j["runs"].size(), 5u);
  EXPECT_TRUE(j["parameters"].contains("tensor"));
  EXPECT_FALSE(j["parameters"].contains("memory"));
  // The file it wrote prices a run in situ.
  const test::CliRun run =
      expect_ok({"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--tp", "8", "--global-batch", "8", "--calibration", cal});
  EXPECT_NE(run.out.find("# in situ: calibrated by " + cal + ": tensor "), std::string::npos) << run.out;
}

TEST_F(RunCalibration, RunsFilesAreReadAsSpreadsheetsWriteThem) {
  // RFC 4180: a quoted field holds commas and "" quotes; columns in any
  // order, others ignored; a byte-order mark and CRLF lines.
  const std::string text =
      "\xEF\xBB\xBF# source: a spreadsheet\r\n"
      "note,step_s,id,stack,platform,gpus,model,seq,tp,pp,cp,ep,vp,mbs,gbs,sp,recompute,zero,fetch,overlap,tpoverlap,precision,attention,"
      "first,last,account,published,where\r\n"
      "kept out,1.5,a,s1,hgx-h100,8,llama3-8b,2048,8,1,1,1,1,1,8,yes,none,1,,no,no,bf16,fused,,,no,\"1,024 tok/s\",\"Table 1, row \"\"8B\"\"\"\r\n";
  const LlmRunsFile f = read_llm_runs_file(write("quoted.csv", text));
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0].published, "1,024 tok/s");
  EXPECT_EQ(f.rows[0].where, "Table 1, row \"8B\"");
  EXPECT_DOUBLE_EQ(f.rows[0].step_s, 1.5);
  EXPECT_EQ(f.rows[0].location, f.path + ":3");
  ASSERT_EQ(f.comments.size(), 1u);
  // A bad value names its column as the file numbers it.
  const std::string bad = write("badcol.csv", std::string("note,") + kHeader + "x," + fmt::format(fmt::runtime(kRuns[0]), "-1"));
  expect_bad_input({"calibrate", "runs", bad}, {"badcol.csv:2: column 26 (step_s): must be a time in seconds > 0"});
  const std::string open = write("open.csv", std::string(kHeader) + "a,s1,hgx-h100,8,llama3-8b,2048,8,1,1,1,1,1,8,yes,none,1,,no,no,bf16,fused,,,no,1,\"x,y\n");
  expect_bad_input({"calibrate", "runs", open}, {"open.csv:2: a quoted field is not closed"});
}

TEST_F(RunCalibration, TheShippedCalibrationIsNamedNotAFile) {
  const test::CliRun run = expect_ok(
      {"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--tp", "8", "--global-batch", "8", "--calibration", "published-runs"});
  EXPECT_NE(run.out.find("# in situ: calibrated by published-runs: tensor "), std::string::npos) << run.out;
  // Every architecture the presets have: the file gives one entry for all.
  const InSituCalibration shipped = load_calibration("published-runs");
  for (const char* arch : {"ampere", "hopper", "blackwell", "cdna3", "cdna4"}) EXPECT_TRUE(shipped.covers(arch)) << arch;
  EXPECT_GT(shipped.resolve("hopper", "fp8")[InSituParam::kTensor], 1.0);
}

TEST_F(RunCalibration, BadInputIsOneLine) {
  std::string two = kHeader;
  for (int i = 0; i < 2; ++i) two += fmt::format(fmt::runtime(kRuns[i]), 1.0);
  const std::string small = write("two.csv", two);
  expect_bad_input({"calibrate", "runs", small}, {small + ": 2 runs for 4 parameters: a fit needs more runs than parameters"});
  expect_bad_input({"calibrate", "runs", small, "--params", "tensr"},
                   {"--params: unknown in-situ parameter 'tensr' (did you mean 'tensor'?) (valid: tensor, memory, straggler_cv, "
                    "step_fixed_ms)"});
  expect_bad_input({"calibrate", "runs", small, "--params", "tensor,tensor"}, {"--params: tensor is given twice"});
  const std::string twice = write("twice.csv", std::string(kHeader) + fmt::format(fmt::runtime(kRuns[0]), 1.0) +
                                                   fmt::format(fmt::runtime(kRuns[0]), 1.0));
  expect_bad_input({"calibrate", "runs", twice}, {"twice.csv:3: column 1 (id): 'a' is given twice"});
  const std::string negative = write("neg.csv", std::string(kHeader) + fmt::format(fmt::runtime(kRuns[0]), -1.0));
  expect_bad_input({"calibrate", "runs", negative}, {"neg.csv:2: column 25 (step_s): must be a time in seconds > 0"});
  const std::string nan = write("nan.csv", std::string(kHeader) + fmt::format(fmt::runtime(kRuns[0]), "nan"));
  expect_bad_input({"calibrate", "runs", nan}, {"nan.csv:2: column 25 (step_s)"});
  const std::string no_column = write("nocol.csv", "id,stack\na,b\n");
  expect_bad_input({"calibrate", "runs", no_column}, {"nocol.csv:1: missing column 'platform'"});
  const std::string unknown = write("unknown.csv", std::string(kHeader) + "a,s,hgx-h900,8,llama3-8b,,8,1,1,1,1,1,8,no,none,1,,no,no,bf16,fused,,,no,1,x,y\n");
  expect_bad_input({"calibrate", "runs", unknown}, {"unknown.csv:2: column 3 (platform): no preset 'hgx-h900'"});
  expect_bad_input({"calibrate", "runs", small, "--jobs", "0"}, {"--jobs"});
  expect_bad_input({"calibrate", "runs", (dir_ / "none.csv").string()}, {"none.csv"});
  expect_bad_input({"calibrate", "--base", "hgx-h100", "runs", small}, {"calibrate runs: --base is calibrate DIR's option, not calibrate runs'"});
  expect_bad_input({"calibrate"}, {"calibrate: give DIR (a GPU's measurements) or `runs FILE` (measured training runs)"});
}

}  // namespace
}  // namespace acesim
