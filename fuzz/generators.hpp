// RapidCheck generators of case records, aimed at the classic GEMM bugs: sizes 1..20, tile multiples ± 1
// and ± the vector width, K below, at and around the pipeline depth, grids of 0.5, 1.25 and 2.5 waves,
// large K, padded leading dimensions, the alpha/beta pairs that expose C handling, split counts up to one
// more than the K tiles, persistent grids of 1, 2 and 3 CTAs, and value distributions from exact small
// integers to normal values, and zero sizes; each dimension on the candidate's preferred unit or off it
// where its refusal allows (the domain law: tests/test_domain.cpp). They generate records (a few numbers), so
// shrinking is cheap.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "fuzz/case.hpp"
#include "fuzz/domain.hpp"

namespace tunefuzz::fuzz {

/// The version of what a candidate's cases are and how they are judged (the generators here, the oracle, the
/// case runner): part of a stored fuzz verdict's key (tuner/campaign/verdict_keys.hpp). Raise it with any
/// change that could turn a pass into a failure, so stored verdicts are fuzzed again.
// 2: one case in four aligned throughout (df2d7cc); 3: huge cases of exact distributions judged exactly
// (f02e59e); 4: single packed rows and columns drawn where a refusal decides (ce8e14d); 5: M folded into the
// largest M a candidate accepts (CaseSpace::max_m), and steps probed from a single row too
inline constexpr int kCaseGeneratorVersion = 5;

/// What the candidate under test accepts and where its edges are.
struct CaseSpace {
  /// The preferred unit (the candidate's vector width, or 1) of K, lda and A's offset: most cases keep them
  /// multiples of it; the others take the residues `steps` allows.
  int64_t k_unit = 1;
  /// The same for N, ldb and B's offset.
  int64_t n_unit = 1;
  /// Bytes of A's and B's elements and of C's: the residue classes the domain law counts are modulo 16 bytes.
  int64_t input_bytes = 2, output_bytes = 2;
  int64_t tile_m = 128, tile_n = 128, tile_k = 32;
  int64_t stages = 3;
  int64_t sm_count = 132;
  int64_t max_macs = int64_t{1} << 27;  ///< m·n·k cap, so a full double reference stays cheap
  /// Weight (against 8 for all other shapes) of "huge" cases: C with more than 2^31 elements, K small, so
  /// 32-bit offset arithmetic overflows. Each costs seconds and 8+ GB, so campaigns opt in (0 = never).
  int huge_weight = 0;
  /// The candidate splits K (SPLIT_K): cases override its split count with 1, 2, 3, the K tile count and
  /// one more (empty splits must still be correct).
  bool varies_splits = false;
  /// The candidate walks units with stride gridDim.x: cases override its grid with 1, 2, 3 CTAs and odd
  /// fractions of a wave.
  bool varies_grid = false;
  /// Storage orders of A and B the candidate computes; cases draw from them (row-major A and B most often).
  std::vector<Layout> layouts = {Layout{}};
  /// Per layout (parallel to `layouts`), the finest step of each dimension the candidate accepts
  /// (probe_steps). A dimension whose step is finer than its preferred unit is drawn off that unit in about
  /// a quarter of the cases, at every residue the step allows. Empty: default_steps.
  std::vector<Steps> steps;
  /// The same for records with a zero size (probe_zero_steps); empty: `steps`.
  std::vector<Steps> zero_steps;
  /// The largest M the candidate accepts (probe_max_m), 0 for no bound: drawn sizes above it are folded into
  /// 1..max_m, so a candidate that takes M up to one tile gets its cases without a redraw for each.
  int64_t max_m = 0;
  /// Whether the candidate accepts a record (its refusal rule); empty: every record. gen_case draws broadly
  /// and keeps what this accepts.
  std::function<bool(const CaseRecord&)> accepts;
};

/// The steps of a space without probed ones: every dimension on its preferred unit, M on A's unit where A is
/// column-major, K on both units where B is.
Steps default_steps(const CaseSpace& space, const Layout& layout);

/// Records drawn broadly over the space's layouts and steps, before the candidate's refusal filters them:
/// sizes aimed at the edges (zero sizes included), leading dimensions and offsets on the preferred unit or
/// off it.
rc::Gen<CaseRecord> gen_broad_case(const CaseSpace& space);

/// gen_broad_case filtered by `space.accepts` (at most 100 draws per case; shrinks stay accepted).
rc::Gen<CaseRecord> gen_case(const CaseSpace& space);

/// Three small cases, fixed rather than drawn, for replays under compute-sanitizer, whose tools see races
/// and barrier misuse that outputs rarely show: two tiles per CTA on a grid of 2 (when the candidate takes a
/// grid) with K several trips round the pipeline; partial tiles in M, N and K with beta != 0; and three tile
/// rows on one CTA with 3 K splits (when the candidate splits K). Every size is a multiple of the space's
/// alignment units, in its first layout.
std::vector<CaseRecord> sanitizer_cases(const CaseSpace& space);

/// The bug classes a record exercises, for coverage counts: `m_tail`, `k_lt_tile`, `large_k`,
/// `beta_nonzero`..., then its domain classes (domain_tags: `n%8=3`, `k=0`, `m_tile=tail`).
std::vector<std::string> case_tags(const CaseRecord& record, const CaseSpace& space);

}  // namespace tunefuzz::fuzz
