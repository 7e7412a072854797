// A cost model of a GEMM candidate from its template's arithmetic, occupancy and bytes, with no
// measurement: the time of the waves of output tiles at the SM's tensor (or FMA) rate, the time to stream
// the operands from memory with the bytes each CTA keeps in flight, the operand traffic from L2 to the SMs,
// and the launch overhead. Its figures are right up to a factor per template; the model-guided strategy fits
// that factor to the screens.
#pragma once

#include "tuner/strategy/search.hpp"

namespace tunefuzz {

struct CostEstimate {
  double compute_ms = 0;   ///< waves × one tile's multiply-adds at the SM's rate, shared by resident CTAs
  double memory_ms = 0;    ///< the problem's least traffic at the bandwidth the CTAs in flight can pull
  double l2_ms = 0;        ///< every tile's operand loads from L2
  double reduction_ms = 0;  ///< kernels before and after: packing the operands, reducing split-K partials
  double overhead_ms = 0;  ///< launches (one more for packing, one more for a split-K reduction)
  double total_ms() const;
};

/// Resident CTAs per SM: the compiled figure when the candidate has one, else estimated from its threads,
/// shared memory and a guess of its registers (its accumulators plus addresses).
int64_t resident_blocks(const SearchCandidate& candidate, const GpuLimits& limits);

/// The cost of `problem` in the form the candidate runs it (launch_form: an N = 1 product as a 1×M one).
CostEstimate estimate_cost(const SearchCandidate& candidate, const GemmShape& problem,
                           const GpuLimits& limits);

}  // namespace tunefuzz
