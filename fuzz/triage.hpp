// Failure classes of a candidate, and the sub-classification of wrong results from the shape of the error:
// which elements failed says more about the bug than how much they failed by.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fuzz/oracle.hpp"

namespace tunefuzz::fuzz {

enum class FailureClass {
  compile_failed,       ///< the compiler rejected the candidate
  not_supported,        ///< the candidate cleanly refused a problem it was asked to run
  launch_error,         ///< the launch itself failed (resources, invalid configuration); the context survives
  crash,                ///< the kernel faulted (illegal or misaligned address...) or the worker died
  hang,                 ///< the worker exceeded its time limit and was killed
  incorrect,            ///< the output disagrees with the reference
  out_of_bounds_write,  ///< memory outside C (canary bands, row padding) was modified
  nondeterministic,     ///< two identical runs gave different bits
  timeout,  ///< the job's time ran out while no kernel was running (host work, e.g. judging a huge case):
            ///< no verdict on the kernel
  sanitizer,  ///< compute-sanitizer reported an error, a hazard or a barrier misuse on a sampled case
};

enum class IncorrectKind {
  unwritten,        ///< elements still hold the NaN poison
  nan,              ///< NaN or Inf where the reference is finite
  all_zero,         ///< every element is zero while the reference is not
  tail_only,        ///< only elements of partial edge tiles are wrong
  tile_structured,  ///< wrong elements fill whole tiles
  bound_exceeded,   ///< scattered elements outside the error bound
};

const char* to_string(FailureClass failure);
std::optional<FailureClass> parse_failure_class(const std::string& text);
const char* to_string(IncorrectKind kind);

/// Sub-classifies a failed verdict of an m×n output computed in tile_m×tile_n tiles. `output_all_zero`: every
/// element of the output is ±0.
IncorrectKind classify_incorrect(const Verdict& verdict, int64_t m, int64_t n, int64_t tile_m, int64_t tile_n,
                                 bool output_all_zero);

}  // namespace tunefuzz::fuzz
