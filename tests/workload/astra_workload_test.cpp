// ASTRA-sim 1.0 text workloads: units, totals, parallelism semantics, errors.
#include <gtest/gtest.h>

#include "config/input_error.h"
#include "scratch_dir.h"
#include "support.h"
#include "test_data.h"
#include "workload/formats/astra_workload.h"
#include "driver/training_run.h"

namespace acesim {
namespace {

using test::dim;

const std::string kWl = test::kData + "/astra-sim-1.0/workload/";

Topology ring(int n) { return Topology({dim(DimKind::kRing, n, 100, 500)}); }

TEST(AstraWorkload, Resnet50TotalsReadBackExactly) {
  const Topology topo = ring(64);
  const Workload w = read_astra_workload(kWl + "Resnet50_DataParallel.txt", topo);
  EXPECT_EQ(w.parallelism, "DATA");
  ASSERT_EQ(w.layers.size(), 54u);
  const WorkloadTotals t = totals(w);
  // Cycles of 1 ns: the columns' sums, in picoseconds. (A 1000x slip here is
  // what the public converter to ASTRA-sim 2.0 traces makes.)
  EXPECT_EQ(t.forward_ps, 380038LL * 1000);
  EXPECT_EQ(t.input_grad_ps, 377463LL * 1000);
  EXPECT_EQ(t.weight_grad_ps, 337813LL * 1000);
  EXPECT_EQ(t.comm_bytes[static_cast<int>(CollectiveOp::kAllReduce)], 102011648.0);
  EXPECT_EQ(t.collectives, 54);
  EXPECT_EQ(w.layers[0].name, "conv1");
  EXPECT_EQ(w.layers[0].forward.compute.time_ps, 13003LL * 1000);
  EXPECT_EQ(w.layers[0].update_ps, 3229LL * 1000);
  EXPECT_FALSE(w.layers[0].weight_grad.comm.blocking);
  EXPECT_TRUE(w.layers[0].weight_grad.comm.dims == std::vector<int>({0}));
  EXPECT_FALSE(w.layers[0].forward.comm.op.has_value());
}

TEST(AstraWorkload, TransformerSplitsModelAndDataDimensions) {
  // model_parallel_NPU_group: 4 on a 4x8 torus: activations on dimension 0,
  // weight gradients on dimension 1.
  const Topology topo({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 8, 100, 500)});
  const Workload w = read_astra_workload(kWl + "Transformer_HybridParallel.txt", topo);
  ASSERT_EQ(w.layers.size(), 57u);
  const Layer& q1 = w.layers[1];
  ASSERT_TRUE(q1.input_grad.comm.op.has_value());
  EXPECT_EQ(q1.input_grad.comm.dims, std::vector<int>({0}));
  EXPECT_TRUE(q1.input_grad.comm.blocking);
  EXPECT_EQ(q1.weight_grad.comm.dims, std::vector<int>({1}));
  const WorkloadTotals t = totals(w);
  EXPECT_EQ(t.comm_bytes[static_cast<int>(CollectiveOp::kAllReduce)], 2644066304.0);
  // The table's all-gather sizes are each rank's input (ASTRA-sim's
  // meaning); acesim counts the gathered output, 4x on dimension 0.
  EXPECT_EQ(t.comm_bytes[static_cast<int>(CollectiveOp::kAllGather)], 4 * 887422976.0);
  // A group that is not a product of leading dimensions is refused.
  const Topology odd({dim(DimKind::kRing, 8, 100, 500), dim(DimKind::kRing, 4, 100, 500)});
  EXPECT_THROW(read_astra_workload(kWl + "Transformer_HybridParallel.txt", odd), InputError);
}

TEST(AstraWorkload, HybridDataModelAndModelData) {
  const Topology topo({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 2, 100, 500)});
  const Workload dm = read_astra_workload(kWl + "MLP_HybridParallel_Data_Model.txt", topo);
  const Workload md = read_astra_workload(kWl + "MLP_HybridParallel_Model_Data.txt", topo);
  for (const Layer& l : dm.layers) {
    if (l.forward.comm.op) {
      EXPECT_EQ(l.forward.comm.dims, std::vector<int>({0}));
    }
    if (l.weight_grad.comm.op) {
      EXPECT_EQ(l.weight_grad.comm.dims, std::vector<int>({1}));
    }
  }
  for (const Layer& l : md.layers) {
    if (l.forward.comm.op) {
      EXPECT_EQ(l.forward.comm.dims, std::vector<int>({1}));
    }
    if (l.weight_grad.comm.op) {
      EXPECT_EQ(l.weight_grad.comm.dims, std::vector<int>({0}));
    }
  }
}

TEST(AstraWorkload, DlrmEmbeddingAllToAllOverlapsTheBottomMlp) {
  const Topology topo = ring(8);
  const Workload w = read_astra_workload(kWl + "DLRM_HybridParallel.txt", topo);
  ASSERT_EQ(w.layers.size(), 8u);
  EXPECT_EQ(w.layers[0].forward.comm.op, CollectiveOp::kAllToAll);
  EXPECT_EQ(w.layers[0].forward.comm.wait_before_forward_layer, 5);  // HYBRID_DLRM 4: top MLP starts at layer 5
  EXPECT_EQ(w.layers[0].input_grad.comm.issue_after_backward_layer, 5);
  EXPECT_TRUE(w.layers[1].weight_grad.comm.op.has_value());
  // The run finishes and the embedding's all-to-alls run in both directions.
  PlatformConfig p = test::platform({dim(DimKind::kRing, 8, 100, 500)});
  p.npu.executor = "ideal";
  p.npu.fixed_kernel_times = true;
  const TrainReport r = run_training(p, w);
  int a2a = 0;
  for (const CollectiveRecord& c : r.collectives) a2a += c.op == CollectiveOp::kAllToAll ? 1 : 0;
  EXPECT_EQ(a2a, 2 * w.iterations);
}

TEST(AstraWorkload, CustomizedPerLayerParallelism) {
  const Topology topo({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 2, 100, 500)});
  const Workload w = read_astra_workload(kWl + "sample_per_layer_parallel_HybridCustomized.txt", topo);
  ASSERT_EQ(w.layers.size(), 6u);
  EXPECT_EQ(w.layers[0].forward.comm.dims, std::vector<int>({0}));      // HYBRID_DATA_MODEL
  EXPECT_EQ(w.layers[1].forward.comm.dims, std::vector<int>({1}));      // HYBRID_MODEL_DATA
  EXPECT_EQ(w.layers[2].weight_grad.comm.dims, std::vector<int>({0, 1}));  // DATA
}

TEST(AstraWorkload, MicroAndCheckpointedTransformerRun) {
  const Topology topo({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 2, 100, 500)});
  PlatformConfig p = test::platform({dim(DimKind::kRing, 4, 100, 500), dim(DimKind::kRing, 2, 100, 500)});
  p.npu.executor = "ideal";
  p.npu.fixed_kernel_times = true;
  for (const char* f : {"microAllReduce.txt", "microAllToAll.txt", "Transformer_HybridParallel_Fwd_In_Bckwd.txt",
                        "MLP_ModelParallel.txt"}) {
    const Workload w = read_astra_workload(kWl + f, topo);
    const TrainReport r = run_training(p, w);
    EXPECT_GT(r.iteration_ps, 0) << f;
  }
  // Checkpointing: layer 19 starts a recomputation from checkpoint 11.
  const Workload w = read_astra_workload(kWl + "Transformer_HybridParallel_Fwd_In_Bckwd.txt", topo);
  ASSERT_EQ(w.layers[19].recompute_forward.size(), 9u);
  EXPECT_EQ(w.layers[19].recompute_forward.front(), 11);
  EXPECT_EQ(w.layers[10].recompute_forward.front(), 2);
}

class AstraWorkloadErrors : public test::ScratchDirTest {
 protected:
  std::string error_of(const std::string& text) {
    const std::string path = write("w.txt", text);
    try {
      read_astra_workload(path, ring(8));
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path + ":", 0), 0u) << msg;
      return msg.substr(path.size());
    }
    ADD_FAILURE() << "accepted: " << text;
    return {};
  }
};

TEST_F(AstraWorkloadErrors, EachProblemNamesLineAndColumn) {
  EXPECT_EQ(error_of(""), ":1: empty workload file (expected a parallelism keyword such as DATA)");
  EXPECT_EQ(error_of("DTA\n1\n"), ":1:1: unknown parallelism 'DTA' (did you mean 'DATA'?)");
  EXPECT_EQ(error_of("DATA\nx\n"), ":2:1: number of layers: expected an integer, got 'x'");
  EXPECT_EQ(error_of("DATA\n2\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            ":3: the file declares 2 layers but has 1");
  EXPECT_EQ(error_of("DATA\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\nl1 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            ":4:1: the file declares 1 layers but has more lines (starting with 'l1')");
  EXPECT_EQ(error_of("DATA\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8\n").substr(0, 26), ":3: expected 12 columns (n");
  EXPECT_EQ(error_of("DATA\n1\nl0 -1 -5 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            ":3:7: forward compute time: must be >= 0, got -5");
  EXPECT_EQ(error_of("DATA\n1\nl0 -1 5 NONE 0 1 NONE 0 1 ALLREDUCE -8 1\n"),
            ":3:37: weight-gradient communication size: must be >= 0, got -8");
  EXPECT_EQ(error_of("DATA\n1\nl0 -1 5 NONE 0 1 NONE 0 1 ALLREDUSE 8 1\n"),
            ":3:27: weight-gradient communication: unknown communication type 'ALLREDUSE' (did you mean 'ALLREDUCE'?)");
  EXPECT_EQ(error_of("DATA\n1\nl0 -1 5x NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            ":3:7: forward compute time: expected an integer, got '5x'");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER model_parallel_NPU_group: 3\n1\nl0 -1 5 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            ":1:46: model_parallel_NPU_group 3 is not a product of leading dimensions of the 8 topology");
  EXPECT_EQ(error_of("HYBRID_DLRM 3\n2\nl0 -1 5 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\nl1 -1 5 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n"),
            ":1:13: last bottom-MLP layer 3 leaves no top MLP in 2 layers");
}

}  // namespace
}  // namespace acesim
