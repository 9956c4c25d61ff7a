// --kernel-times FILE: measured kernels replace the compute model where a
// row matches; bad files are refused naming file, line and column.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "test_data.h"

namespace acesim::test {
namespace {

class KernelTimesCli : public CliTest {
 protected:
  // llama3-8b on one HGX H100 node, data parallel: each rank's QKV GEMM is
  // 8192 tokens x 6144 (4096 + 2 x 1024) x 4096.
  std::vector<std::string> run_args(const std::string& file) {
    std::vector<std::string> a = {"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--tp", "1", "--dp", "8",
                                  "--global-batch", "8", "--iterations", "2", "--allow-oom", "--json"};
    if (!file.empty()) {
      a.push_back("--kernel-times");
      a.push_back(file);
    }
    return a;
  }
};

TEST_F(KernelTimesCli, MatchingRowsReplaceTheModel) {
  const nlohmann::json modelled = parse_json(expect_ok(run_args("")).out);
  EXPECT_EQ(modelled["kernels"]["measured"], 0);
  EXPECT_GT(modelled["kernels"]["modelled"].get<long long>(), 0);
  EXPECT_EQ(modelled["kernels"]["compute_model"], "hopper");
  // The QKV GEMM, measured ten times slower than anything the model gives.
  const std::string file = write("k.csv",
                                 "# a microbenchmark of the QKV projection\n"
                                 "kind,gpu,dtype,shape,time_us\n"
                                 "gemm,h100-sxm,bf16,8192x6144x4096,5000\n"
                                 "gemm,a100-sxm-80gb,bf16,8192x6144x4096,1\n");
  const nlohmann::json measured = parse_json(expect_ok(run_args(file)).out);
  // One QKV GEMM per layer and micro-batch, forward: 32 layers x 1
  // micro-batch x 2 iterations.
  EXPECT_EQ(measured["kernels"]["measured"], 64);
  EXPECT_EQ(measured["kernels"]["modelled"].get<long long>() + 64, modelled["kernels"]["modelled"].get<long long>());
  EXPECT_EQ(measured["kernels"]["kernel_times"], file);
  // 32 layers x 5 ms each, less what the model gave them.
  const double grown_ms = (measured["iteration_time_ns"].get<double>() - modelled["iteration_time_ns"].get<double>()) / 1e6;
  EXPECT_GT(grown_ms, 32 * 5.0 - 32 * 1.0);
  EXPECT_LT(grown_ms, 32 * 5.0);
  const CliRun text = expect_ok({"run", "--model", "llama3-8b", "--platform", "hgx-h100", "--tp", "1", "--dp", "8", "--global-batch",
                                 "8", "--allow-oom", "--kernel-times", file});
  EXPECT_NE(text.out.find("# kernels: 64 from " + file), std::string::npos) << text.out;
}

TEST_F(KernelTimesCli, BadFilesAreRefusedWithLineAndColumn) {
  auto bad = [&](const std::string& body, std::initializer_list<std::string> parts) {
    expect_bad_input(run_args(write("bad.csv", body)), parts);
  };
  bad("kind,gpu,dtype,time_us\ngemm,h100-sxm,bf16,5\n", {"bad.csv:1: missing column 'shape'"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8x8x8,-5\n", {"bad.csv:2: time_us: ", "'-5'"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8x8x8,nan\n", {"bad.csv:2: time_us: ", "'nan'"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h900,bf16,8x8x8,5\n", {"bad.csv:2: gpu: unknown GPU 'h900'", "h100-sxm"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,int4,8x8x8,5\n", {"bad.csv:2: dtype: unknown dtype 'int4'"});
  bad("kind,gpu,dtype,shape,time_us\nconv,h100-sxm,bf16,8x8x8,5\n", {"bad.csv:2: kind: unknown kernel kind 'conv'"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8x8,5\n", {"bad.csv:2: shape: ", "MxNxK"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8x8x8,5\ngemm,h100-sxm,bf16,8 x 8 x 8,6\n",
      {"bad.csv:3: shape: ", "given twice (first on line 2)"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8x8x8\n", {"bad.csv:2: fewer fields than the header has columns"});
  expect_bad_input(run_args(dir_.string() + "/missing.csv"), {"missing.csv: cannot open"});
  // Found by hostile input (issue 42): no upper bound on a time, a column
  // named twice, a field with a control character, an unclosed quote.
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8x8x8,1e308\n",
      {"bad.csv:2: time_us: a time must be a number of microseconds above 0 and at most 1e+09 (1000 s), got '1e308'"});
  bad("kind,gpu,dtype,shape,time_us,kind\ngemm,h100-sxm,bf16,8x8x8,5,gemm\n", {"bad.csv:1: column 'kind' is given twice in the header"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm\x01,bf16,8x8x8,5\n", {"bad.csv:2: gpu: holds a control character (U+0001) at byte 8"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,\"8x8x8,5\n", {"bad.csv:2: a quoted field is not closed"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8x8x8,5,6\n", {"bad.csv:2: more fields than the header has columns"});
  bad("kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,0.5x8x8,5\n", {"bad.csv:2: shape: ", "'0.5' is not a whole number of 1..2147483647"});
  // The platform's GPU has no name to match against.
  expect_bad_input({"run", "--model", "llama3-8b", "--kernel-times", write("k.csv", "kind,gpu,dtype,shape,time_us\n")},
                   {"--kernel-times: the platform's npu names no GPU (npu.gpu)"});
  expect_bad_input({"run", "--workload", kData + "/astra-sim-1.0/workload/DLRM_HybridParallel.txt", "--kernel-times", "k.csv"},
                   {"--kernel-times applies to transformer models"});
}

// A sheet as Excel saves it: "CSV UTF-8" (a byte-order mark, quoted fields,
// a header in another case, CRLF, an extra quoted column holding a comma)
// reads as the plain file does; "Unicode text" (UTF-16) is refused with
// what to do, not with its bytes.
TEST_F(KernelTimesCli, ExcelStyleFilesReadAsThePlainOne) {
  const std::string plain = write("plain.csv", "kind,gpu,dtype,shape,time_us\ngemm,h100-sxm,bf16,8192x6144x4096,5000\n");
  const std::string excel = write("excel.csv",
                                  "\xEF\xBB\xBF\"Kind\",GPU,dtype,\"shape\",Time_us,\"note, free text\"\r\n"
                                  "\"gemm\",h100-sxm,\"bf16\",\"8192x6144x4096\",\"5000\",\"QKV, \"\"fused\"\"\"\r\n");
  const nlohmann::json a = parse_json(expect_ok(run_args(plain)).out);
  const nlohmann::json b = parse_json(expect_ok(run_args(excel)).out);
  EXPECT_EQ(a["kernels"]["measured"], 64);
  EXPECT_EQ(b["kernels"]["measured"], 64);
  EXPECT_EQ(a["iteration_time_ns"], b["iteration_time_ns"]);
  std::string utf16 = "\xFF\xFE";
  for (char c : std::string("kind,gpu,dtype,shape,time_us\n")) utf16 += std::string{c, '\0'};
  expect_bad_input(run_args(write("u16.csv", utf16)), {"u16.csv: UTF-16 text (its byte-order mark says so); acesim reads UTF-8"});
  expect_bad_input(run_args(write("nul.csv", utf16.substr(2))), {"nul.csv:1: a NUL byte (byte 1): not a text file"});
}

}  // namespace
}  // namespace acesim::test
