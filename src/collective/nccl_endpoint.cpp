#include "collective/nccl_endpoint.h"

namespace acesim {

double nccl_hbm_per_byte_sent(CollectiveOp op, NcclAlgo algo, NcclProto proto, int nranks, int ppn) {
  const double w = nccl_wire_factor(proto);  // wire bytes per data byte
  const double n = nranks;
  switch (algo) {
    case NcclAlgo::kRing: {
      // All-reduce: 2(n-1) steps send w each; the input is read at the n
      // reduce-scatter steps that touch it, the output written at the n
      // that finish a segment. Reduce-scatter and all-gather: n-1 sends,
      // n + 1 user-buffer accesses.
      const double user = op == CollectiveOp::kAllReduce ? 2.0 * n : n + 1.0;
      const double sends = op == CollectiveOp::kAllReduce ? 2.0 * (n - 1.0) : n - 1.0;
      return 2.0 + user / (sends * w);
    }
    case NcclAlgo::kCollNetDirect:
    case NcclAlgo::kCollNetChain:
    case NcclAlgo::kTree:
      // Up the tree: receive, read the input, reduce, send; down: receive,
      // write the output, send. 2w sent, 4w through buffers, 2 user bytes.
      // CollNet's heads do the same with the network's switch as parent.
      return 2.0 + 1.0 / w;
    case NcclAlgo::kNvls:
      // Per GPU and byte of data: input read, NCCL buffer written (scatter),
      // read by the switch's reducing loads, written by its multicast
      // stores, read back and the output written (gather): 6, over
      // (n+1)/n bytes sent.
      return 6.0 * n / (n + 1.0);
    case NcclAlgo::kNvlsTree: {
      // NVLS's 6 inside the node, and the reduced 1/ppn share written to
      // the network's send buffer and read by the NIC, written by the NIC
      // and read back on its way down: (6 + 4/ppn) over (ppn+2)/ppn bytes
      // sent (NVLink (ppn+1)/ppn, the NIC 1/ppn on two nodes).
      const double g = ppn > 0 ? ppn : n;
      return (6.0 * g + 4.0) / (g + 2.0);
    }
    case NcclAlgo::kAllPairs:
      // Each member reads its input and writes its output once (2 user
      // bytes) over 2(n-1)/n w sent; every byte received is written to a
      // buffer and read back (reduced, or copied out).
      return 2.0 + n / ((n - 1.0) * w);
    case NcclAlgo::kP2p:
      // The sender reads its input, the receiver's NCCL buffer is written
      // and read back, the output written: 2 user bytes per w sent.
      return 2.0 + 2.0 / w;
  }
  return 2.0 + 1.0 / w;
}

LibraryKernels nccl_kernels(CollectiveOp op, const NcclChoice& choice, int nranks, int ppn) {
  LibraryKernels k;
  k.units = nccl_kernel_units(choice);  // one CTA, so one SM, per channel (MSCCL: per thread block)
  k.hbm_per_byte_sent = nccl_hbm_per_byte_sent(op, choice.algo, choice.proto, nranks, ppn);
  k.streamed = true;
  return k;
}

}  // namespace acesim
