// Failure model files (config/failure_model.h): rates given or derived from
// observed counts, and every bad value named by file, line and key.
#include "config/failure_model.h"

#include <gtest/gtest.h>

#include "config/input_error.h"

namespace acesim {
namespace {

constexpr const char* kTail = R"(storage:
  write_GBps: 100
restart:
  requeue_minutes: 2
  init_minutes: 1
)";

TEST(FailureModel, RatesGivenOrObserved) {
  const FailureModel d = parse_failure_model(std::string("failures_per_1000_days:\n  gpu: 0.5\n  link: 0.02\n") + kTail, "f.yaml");
  EXPECT_EQ(d.per_1000_days, (std::array<double, 4>{0.5, 0.0, 0.0, 0.02}));
  EXPECT_EQ(d.write_GBps, 100.0);
  EXPECT_EQ(d.read_GBps, 100.0);  // read defaults to write
  EXPECT_EQ(d.requeue_minutes, 2.0);
  EXPECT_FALSE(d.async);
  EXPECT_EQ(d.rates_line, 1);
  // 30 GPU failures over 1000 GPUs in 10 days: 3 per 1000 GPU-days; 4 node
  // ones over 125 nodes: 3.2.
  const FailureModel o = parse_failure_model(std::string(R"(observed:
  days: 10
  gpus: 1000
  nodes: 125
  causes:
    - {cause: a, class: gpu, count: 20}
    - {cause: b, class: gpu, count: 10}
    - {cause: c, class: node, count: 4}
checkpoint: {size_GB: 12, async: true}
)") + kTail,
                                             "o.yaml");
  EXPECT_DOUBLE_EQ(o.per_1000_days[0], 3.0);
  EXPECT_DOUBLE_EQ(o.per_1000_days[1], 3.2);
  EXPECT_EQ(o.causes.size(), 3u);
  EXPECT_EQ(*o.checkpoint_GB, 12.0);
  EXPECT_TRUE(o.async);
}

TEST(FailureModel, BuiltinsByName) {
  EXPECT_EQ(failure_model_names(), (std::vector<std::string>{"default", "meta-llama3"}));
  const FailureModel m = load_failure_model("meta-llama3");
  // Table 5's 268 GPU interruptions over 16,384 GPUs and 54 days.
  EXPECT_DOUBLE_EQ(m.per_1000_days[0], 1000.0 * 268 / (16384.0 * 54.0));
  EXPECT_DOUBLE_EQ(m.per_1000_days[1], 1000.0 * 102 / (2048.0 * 54.0));
  EXPECT_DOUBLE_EQ(m.per_1000_days[2], 1000.0 * 7 / (16384.0 * 54.0));
  EXPECT_DOUBLE_EQ(m.per_1000_days[3], 1000.0 * 42 / (16384.0 * 54.0));
  EXPECT_EQ(m.write_GBps, 2000.0);
  EXPECT_EQ(m.requeue_minutes + m.init_minutes, 10.5);
}

void expect_error(const std::string& yaml, const std::string& message) {
  SCOPED_TRACE(yaml);
  try {
    parse_failure_model(yaml, "f.yaml");
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(FailureModel, BadValuesNameFileLineAndKey) {
  const std::string tail = kTail;
  expect_error("failures_per_1000_days:\n  gpu: -1\n" + tail, "f.yaml:2: failures_per_1000_days.gpu: must be at least 0 and at most 1e+06, got -1");
  expect_error("failures_per_1000_days:\n  gpu: .nan\n" + tail, "f.yaml:2: failures_per_1000_days.gpu: expected a number, got '.nan'");
  expect_error("failures_per_1000_days:\n  gpu: nan\n" + tail, "f.yaml:2: failures_per_1000_days.gpu: expected a number, got 'nan'");
  expect_error("failures_per_1000_days:\n  gpus: 1\n" + tail, "f.yaml:2: failures_per_1000_days.gpus: unknown key (did you mean 'gpu'?)");
  expect_error(tail, "f.yaml: no rates: give failures_per_1000_days or observed");
  expect_error("failures_per_1000_days: {gpu: 1}\nobserved: {days: 1}\n" + tail,
               "f.yaml:2: observed: give the rates either as failures_per_1000_days or as observed counts, not both");
  expect_error("observed:\n  days: 1\n  causes:\n    - {cause: x, class: nic, count: 3}\n" + tail,
               "f.yaml:4: observed.causes[0].class: observed.nics is not given: the nic rate needs how many there were");
  expect_error("observed:\n  days: 1\n  gpus: 8\n  causes:\n    - {cause: x, class: gpu, count: -3}\n" + tail,
               "f.yaml:5: observed.causes[0].count: must be in 0..1000000000, got -3");
  expect_error("observed:\n  days: 0\n  gpus: 8\n  causes:\n    - {cause: x, class: gpu, count: 3}\n" + tail,
               "f.yaml:2: observed.days: must be above 0 and at most 1e+06, got 0");
  expect_error("observed:\n  days: 1\n  gpus: 8\n  causes:\n    - {cause: x, class: gpus, count: 3}\n" + tail,
               "f.yaml:5: observed.causes[0].class: unknown class 'gpus' (did you mean 'gpu'?)");
  expect_error("failures_per_1000_days: {gpu: 1}\nstorage: {write_GBps: 0}\nrestart: {requeue_minutes: 1, init_minutes: 1}\n",
               "f.yaml:2: storage.write_GBps: must be above 0 and at most 1e+09, got 0");
  expect_error("failures_per_1000_days: {gpu: 1}\nstorage: {write_GBps: 1}\nrestart: {requeue_minutes: 1}\n",
               "f.yaml:3: restart.init_minutes: missing (required)");
  expect_error("failures_per_1000_days: {gpu: 1}\nstorage: {write_GBps: 1}\nrestart: {requeue_minutes: 1, init_minutes: 1}\ncheckpoint: {async: yes}\n",
               "f.yaml:4: checkpoint.async: expected true or false, got 'yes'");
}

TEST(FailureModel, UnknownNameListsTheBuiltins) {
  try {
    load_failure_model("meta-llama");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--failures: 'meta-llama' is neither a file nor a built-in failure model (did you mean 'meta-llama3'?); the built-ins: default | meta-llama3");
  }
}

}  // namespace
}  // namespace acesim
