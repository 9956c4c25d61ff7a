// What NCCL's kernels cost the endpoint (docs/model.md, "NCCL at the
// endpoint"): one compute unit (CTA) per channel, and the HBM bytes its
// algorithm and protocol read and write per byte they put on the links.
#pragma once

#include "algorithm/collective_op.h"
#include "collective/nccl_model.h"
#include "endpoint/executor.h"

namespace acesim {

// HBM bytes at one GPU per byte it sends (wire bytes: the protocol's flags
// included) for `op` over `nranks` GPUs. Ring and tree: every wire byte is
// written into a receive buffer and read back once, and the user's buffers
// are read or written once per data byte at each step that touches them;
// NVLS: NCCL copies the user's buffers into its own and back, and the
// switch reads and writes every GPU's copy once; NVLS-tree adds its
// node-reduced 1/ppn share through the network's buffers. `ppn`: GPUs per
// node (0: all on one node).
double nccl_hbm_per_byte_sent(CollectiveOp op, NcclAlgo algo, NcclProto proto, int nranks, int ppn = 0);

// The LibraryKernels of a collective NCCL runs with `choice`.
LibraryKernels nccl_kernels(CollectiveOp op, const NcclChoice& choice, int nranks, int ppn = 0);

}  // namespace acesim
