// In-situ parameters (src/compute/in_situ.h): the expected maximum of
// normals against its closed forms, calibration files (resolution by
// specificity, every refusal), and their effect on an LLM step: each
// parameter moves what it names, by its closed form, and neutral values
// change nothing to the picosecond.
#include "compute/in_situ.h"

#include <cmath>
#include <numbers>
#include <string>

#include <gtest/gtest.h>

#include "cli_runner.h"
#include "compute/kernel_pricer.h"
#include "config/input_error.h"
#include "config/presets.h"
#include "driver/llm_run.h"
#include "scratch_dir.h"
#include "workload/llm/llm_graph.h"

namespace acesim {
namespace {

TEST(InSitu, ExpectedMaximumOfNormalsHasItsClosedForms) {
  // n = 2..5 have closed forms (Bose and Gupta 1959): 1/sqrt(pi),
  // 3/(2 sqrt(pi)), 3/(2 sqrt(pi)) (1 + 2 asin(1/3)/pi) for 4, and for 5
  // 5/(4 sqrt(pi)) (1 + 6 asin(1/3)/pi).
  const double rpi = 1.0 / std::sqrt(std::numbers::pi);
  const double a = std::asin(1.0 / 3.0) / std::numbers::pi;
  EXPECT_EQ(expected_max_normal(1), 0.0);
  EXPECT_NEAR(expected_max_normal(2), rpi, 1e-9);
  EXPECT_NEAR(expected_max_normal(3), 1.5 * rpi, 1e-9);
  EXPECT_NEAR(expected_max_normal(4), 1.5 * rpi * (1.0 + 2.0 * a), 1e-9);
  EXPECT_NEAR(expected_max_normal(5), 1.25 * rpi * (1.0 + 6.0 * a), 1e-9);
  // Tabulated values (Harter 1961, to 4 places): 1.4236 for 8, 2.3437 for
  // 64, 3.2414 for 1,000.
  EXPECT_NEAR(expected_max_normal(8), 1.4236, 1e-4);
  EXPECT_NEAR(expected_max_normal(64), 2.3437, 1e-4);
  EXPECT_NEAR(expected_max_normal(1000), 3.2414, 2e-4);
  // It grows like sqrt(2 ln n), more slowly the larger the job.
  EXPECT_LT(expected_max_normal(16384), std::sqrt(2.0 * std::log(16384.0)));
  EXPECT_GT(expected_max_normal(131072), expected_max_normal(16384));
}

class Calibrations : public test::ScratchDirTest {
 protected:
  InSituCalibration parse(const std::string& text) { return parse_calibration(text, "cal.yaml"); }
  void refused(const std::string& text, const std::string& message) {
    try {
      parse(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
};

TEST_F(Calibrations, TheMostSpecificEntryGivesEachParameter) {
  const InSituCalibration c = parse(
      "calibration: 1\nsource: three runs\nparameters:\n"
      "  - {tensor: 1.1, memory: 1.2, step_fixed_ms: 5}\n"
      "  - {arch: hopper, tensor: 1.15}\n"
      "  - {precision: fp8, memory: 1.3}\n"
      "  - {arch: hopper, precision: fp8, tensor: 1.2, straggler_cv: 0.004}\n");
  EXPECT_EQ(c.source, "three runs");
  const InSitu hopper_fp8 = c.resolve("hopper", "fp8");
  EXPECT_EQ(hopper_fp8[InSituParam::kTensor], 1.2);
  EXPECT_EQ(hopper_fp8[InSituParam::kMemory], 1.3);
  EXPECT_EQ(hopper_fp8[InSituParam::kStragglerCv], 0.004);
  EXPECT_EQ(hopper_fp8[InSituParam::kStepFixedMs], 5.0);
  const InSitu hopper_bf16 = c.resolve("hopper", "bf16");
  EXPECT_EQ(hopper_bf16[InSituParam::kTensor], 1.15);
  EXPECT_EQ(hopper_bf16[InSituParam::kMemory], 1.2);
  EXPECT_EQ(hopper_bf16[InSituParam::kStragglerCv], 0.0);
  const InSitu ampere = c.resolve("ampere", "bf16");
  EXPECT_EQ(ampere[InSituParam::kTensor], 1.1);
  EXPECT_TRUE(c.covers("ampere"));
  // Written back, it reads the same.
  const InSituCalibration again = parse(calibration_yaml(c));
  ASSERT_EQ(again.entries.size(), c.entries.size());
  EXPECT_EQ(again.resolve("hopper", "fp8").value, hopper_fp8.value);
  EXPECT_EQ(again.source, c.source);
  EXPECT_TRUE(InSitu{}.neutral());
  EXPECT_FALSE(ampere.neutral());
  EXPECT_EQ(in_situ_text(InSitu{}, 8), "neutral");
  EXPECT_EQ(in_situ_text(hopper_fp8, 2),
            "tensor 1.200x, memory 1.300x, straggler_cv 0.0040 (compute 1.0023x at 2 GPUs), step_fixed_ms 5.000");
}

TEST_F(Calibrations, BadFilesAreRefusedWithFileLineAndKey) {
  refused("parameters:\n  - {tensor: 1.1}\n", "cal.yaml:1: calibration: missing (required)");
  refused("calibration: 2\nparameters:\n  - {tensor: 1.1}\n", "cal.yaml:1: calibration: this acesim reads calibration files of version 1");
  refused("calibration: 1\nparameters: []\n",
          "cal.yaml:2: parameters: expected a list of entries: {arch, precision, tensor, memory, ...}");
  refused("calibration: 1\nparameters:\n  - {tensr: 1.1}\n",
          "cal.yaml:3: parameters[0].tensr: unknown key (did you mean 'tensor'?)");
  refused("calibration: 1\nparameters:\n  - {tensor: 3}\n",
          "cal.yaml:3: parameters[0].tensor: 3 outside its plausible range [1, 1.25] (in-situ over isolated time of GEMMs and "
          "fused attention; docs/in-situ.md)");
  refused("calibration: 1\nparameters:\n  - {straggler_cv: -0.1}\n",
          "cal.yaml:3: parameters[0].straggler_cv: -0.1 outside its plausible range [0, 0.02] (spread of a GPU's compute time "
          "(coefficient of variation); the step waits for the slowest GPU; docs/in-situ.md)");
  refused("calibration: 1\nparameters:\n  - {memory: .nan}\n", "cal.yaml:3: parameters[0].memory: expected a number, got '.nan'");
  refused("calibration: 1\nparameters:\n  - {arch: hoper, tensor: 1.1}\n",
          "cal.yaml:3: parameters[0].arch: unknown architecture 'hoper' (did you mean 'hopper'?) (valid: " + [] {
            std::string s;
            for (const std::string& a : arch_names()) s += (s.empty() ? "" : ", ") + a;
            return s;
          }() + ")");
  refused("calibration: 1\nparameters:\n  - {precision: fp4, tensor: 1.1}\n",
          "cal.yaml:3: parameters[0].precision: unknown precision 'fp4' (valid: bf16, fp8)");
  refused("calibration: 1\nparameters:\n  - {arch: hopper}\n",
          "cal.yaml:3: parameters[0]: gives no parameter (tensor, memory, straggler_cv, step_fixed_ms)");
  refused("calibration: 1\nparameters:\n  - {arch: hopper, tensor: 1.1}\n  - {arch: hopper, memory: 1.1}\n",
          "cal.yaml:4: parameters[1]: a second entry for hopper and every precision (the first at line 3): give each parameter once");
}

// A small model on one HGX H100 node, tensor-parallel only: no data-parallel
// communication, so the step is its kernels and the tp collectives.
struct Step {
  LlmReport report;
  TimePs gemm_ps = 0, norm_ps = 0;
};
Step step(const InSituSetting& in_situ) {
  PlatformConfig p = load_preset(*preset_registry().find("hgx-h100"));
  set_nodes(p, 1, "--nodes");
  const Topology topo(p.dims);
  TransformerShape m;
  m.name = "small";
  m.layers = 4;
  m.hidden = 2048;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 8192;
  m.seq = 2048;
  m.vocab = 32768;
  ParallelPlan plan;
  plan.tp = 8;
  plan.global_batch = 4;
  LlmOptions o;
  o.pricer = make_kernel_pricer(p.npu, nullptr, in_situ);
  const LlmJob job(m, plan, topo, o);
  Step s;
  s.report = run_llm(p, job);
  s.gemm_ps = s.report.compute_by_kind_ps[static_cast<std::size_t>(KernelKind::kGemm)];
  s.norm_ps = s.report.compute_by_kind_ps[static_cast<std::size_t>(KernelKind::kNorm)];
  return s;
}

TEST(InSituStep, EachParameterMovesWhatItNames) {
  const Step base = step({});
  EXPECT_TRUE(base.report.calibration.empty());
  // A calibration whose values are neutral changes nothing, to the picosecond.
  InSituSetting neutral;
  neutral.file = "neutral.yaml";
  neutral.gpus = 8;
  const Step same = step(neutral);
  EXPECT_EQ(same.report.iteration_ps, base.report.iteration_ps);
  EXPECT_EQ(same.report.calibration, "neutral.yaml");

  InSituSetting tensor = neutral;
  tensor.values[InSituParam::kTensor] = 1.2;
  const Step t = step(tensor);
  EXPECT_NEAR(static_cast<double>(t.gemm_ps), 1.2 * static_cast<double>(base.gemm_ps), 1e-6 * static_cast<double>(base.gemm_ps));
  EXPECT_EQ(t.norm_ps, base.norm_ps);
  EXPECT_GT(t.report.iteration_ps, base.report.iteration_ps);

  InSituSetting memory = neutral;
  memory.values[InSituParam::kMemory] = 1.5;
  const Step mem = step(memory);
  EXPECT_EQ(mem.gemm_ps, base.gemm_ps);
  EXPECT_NEAR(static_cast<double>(mem.norm_ps), 1.5 * static_cast<double>(base.norm_ps), 1e-6 * static_cast<double>(base.norm_ps));

  // The stragglers of 8 GPUs: every kernel 1 + cv E[max of 8] times as long.
  InSituSetting straggler = neutral;
  straggler.values[InSituParam::kStragglerCv] = 0.02;
  const Step st = step(straggler);
  const double factor = 1.0 + 0.02 * expected_max_normal(8);
  EXPECT_NEAR(static_cast<double>(st.report.compute_ps), factor * static_cast<double>(base.report.compute_ps),
              1e-6 * static_cast<double>(base.report.compute_ps));

  // The host's fixed work per step: the step is that much longer, the
  // kernels unchanged.
  InSituSetting fixed = neutral;
  fixed.values[InSituParam::kStepFixedMs] = 10.0;
  const Step f = step(fixed);
  EXPECT_EQ(f.report.compute_ps, base.report.compute_ps);
  EXPECT_NEAR(static_cast<double>(f.report.iteration_ps - base.report.iteration_ps), 10e9, 1e3);
}

TEST(InSituStep, ACalibrationNeedsKernelsItCanPrice) {
  NpuConfig npu;  // no architecture, no measured times
  InSituSetting s;
  s.file = "cal.yaml";
  try {
    make_kernel_pricer(npu, nullptr, s);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--calibration cal.yaml: in-situ parameters apply to kernels priced by shape or measured, and this platform's NPU has "
              "neither (no npu.arch, no --kernel-times)");
  }
}

class InSituCli : public test::CliTest {};

TEST_F(InSituCli, RunSaysWhetherItIsCalibratedAndRefusesAnotherGpusFile) {
  const std::string cal = write("cal.yaml", "calibration: 1\nsource: a test\nparameters:\n  - {arch: hopper, tensor: 1.1, step_fixed_ms: 2}\n");
  const std::vector<std::string> base = {"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--tp", "8", "--global-batch", "8"};
  const test::CliRun plain = expect_ok(base);
  EXPECT_NE(plain.out.find("# in situ: not calibrated"), std::string::npos) << plain.out;
  std::vector<std::string> with = base;
  with.insert(with.end(), {"--calibration", cal});
  const test::CliRun calibrated = expect_ok(with);
  EXPECT_NE(calibrated.out.find("# in situ: calibrated by " + cal + ": tensor 1.100x, step_fixed_ms 2.000"), std::string::npos)
      << calibrated.out;
  // A file for Hopper on an A100.
  expect_bad_input({"run", "--model", "llama3-8b", "--platform", "hgx-a100", "--tp", "8", "--global-batch", "8", "--calibration", cal},
                   {"--calibration " + cal +
                    ": no entry for this platform's architecture 'ampere' (the file calibrates hopper): a calibration of another GPU "
                    "does not carry over"});
  // Modes without transformer kernels refuse it, and a bad file is one line.
  expect_bad_input({"run", "--model", "resnet50", "--calibration", cal},
                   {"--calibration applies to transformer models (--model), not to the layer-table models"});
  expect_bad_input({"run", "--model", "llama3-8b", "--tp", "8", "--platform", "hgx-h100", "--calibration",
                    write("bad.yaml", "calibration: 1\nparameters:\n  - {tensor: 2}\n")},
                   {"bad.yaml:3: parameters[0].tensor: 2 outside its plausible range [1, 1.25]"});
}

}  // namespace
}  // namespace acesim
