// The domain of a fuzz case, dimension by dimension: the nine numbers a candidate's refusal looks at (M, N,
// K, the three leading dimensions and the three base offsets), set one at a time without moving the others,
// and the classes the domain law counts: each dimension's residue modulo 16 bytes of its element, zero sizes,
// and whether M, N and K leave a partial tile. A class a record belongs to is a coverage tag (`n%8=3`, `k=0`,
// `m_tile=tail`), so a campaign can say which accepted classes its cases reached.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/case.hpp"

namespace tunefuzz::fuzz {

struct CaseSpace;

enum class Dimension { m, n, k, lda, ldb, ldc, a_offset, b_offset, c_offset };
inline constexpr std::array<Dimension, 9> kDimensions = {
    Dimension::m,   Dimension::n,        Dimension::k,        Dimension::lda,     Dimension::ldb,
    Dimension::ldc, Dimension::a_offset, Dimension::b_offset, Dimension::c_offset};

const char* to_string(Dimension dimension);

/// The dimension's value in `record` (leading dimensions as the kernel sees them: extent plus padding).
int64_t value_of(const CaseRecord& record, Dimension dimension);

/// `record` with `dimension` at `value` and every other dimension's value kept, leading dimensions included
/// (their paddings absorb a change of M, N or K). A leading dimension that would fall below its row grows by
/// whole residue moduli (residue_modulus), so its residue stays. nullopt for a negative value or a leading
/// dimension below its row.
std::optional<CaseRecord> with_value(const CaseRecord& record, Dimension dimension, int64_t value,
                                     const CaseSpace& space);

/// What the law counts along one dimension.
struct DomainClass {
  enum class Kind { residue, zero, whole_tiles, partial_tile };
  Dimension dimension;
  Kind kind;
  int64_t residue = 0, modulus = 1;  ///< residue classes only
  /// `n%8=3`, `k=0`, `m_tile=whole`, `m_tile=tail`: the coverage tag.
  std::string tag() const;
  bool contains(const CaseRecord& record, const CaseSpace& space) const;
};

/// The residue modulus of a dimension: 16 bytes of A's and B's elements for M, N, K, lda, ldb and the A and
/// B offsets, of C's elements for ldc and C's offset (the widest vector access any template makes).
int64_t residue_modulus(Dimension dimension, const CaseSpace& space);

/// Every class of the space: residues of each dimension, M, N or K zero, and whole or partial tiles of M, N
/// and K.
std::vector<DomainClass> domain_classes(const CaseSpace& space);

/// The classes `record` is in, as tags.
std::vector<std::string> domain_tags(const CaseRecord& record, const CaseSpace& space);

/// Values of `dimension` inside `domain_class` to try from `base` (a few, near the base's own value and small
/// ones), for probing which classes a candidate accepts.
std::vector<int64_t> class_values(const DomainClass& domain_class, const CaseRecord& base,
                                  const CaseSpace& space);

/// The finest step of each dimension (indexed by Dimension) a candidate accepts in one layout.
using Steps = std::array<int64_t, kDimensions.size()>;

/// Whether every row length, leading dimension and base offset of `record` is a multiple of 16 bytes of its
/// element (residue_modulus; N of C's element too, as C's row length): the problems most callers have, and
/// the only ones on which a launcher takes its widest paths (TMA stores of C, 16-byte loads everywhere).
bool is_aligned(const CaseRecord& record, const CaseSpace& space);

/// `record` moved onto is_aligned's multiples, each also a multiple of its dimension's step in `steps`:
/// sizes down (never below one multiple; zero stays zero), leading dimensions up, offsets down.
CaseRecord aligned(CaseRecord record, const Steps& steps, const CaseSpace& space);

/// Records of `layout` to probe a candidate from: every dimension on 16-byte multiples (M = N = K = 256, 64
/// and 16, packed leading dimensions, aligned bases), each of those records with one dimension moved off by
/// one element, and a single row (M = 1, N = K = 16) for candidates that take M up to one tile.
std::vector<CaseRecord> probe_bases(const CaseSpace& space, const Layout& layout);

/// The steps `accepts` takes along each dimension of `layout`: moving one dimension of each accepted probe
/// base through every residue, the greatest common divisor of the residues accepted (and the modulus).
/// nullopt when it accepts no probe base (a layout the candidate does not compute).
std::optional<Steps> probe_steps(const CaseSpace& space, const Layout& layout,
                                 const std::function<bool(const CaseRecord&)>& accepts);

/// The largest M `accepts` takes in `layout`, from its first accepted probe base with M doubled until it is
/// refused (past 2^20: no bound, 0) and then halved back by bisection: a point that swaps its operands takes
/// M up to its BN, gemm_skinny up to 128. Found by probing the refusal, not by restating it; 0 also where no
/// probe base is accepted.
int64_t probe_max_m(const CaseSpace& space, const Layout& layout,
                    const std::function<bool(const CaseRecord&)>& accepts);

/// The same for records with M, N or K zero (from the probe bases with one size emptied; each dimension the
/// finest step any of the three takes): a quick return reads no operand, so its candidate may accept any
/// residue there. nullopt when it accepts none of them.
std::optional<Steps> probe_zero_steps(const CaseSpace& space, const Layout& layout,
                                      const std::function<bool(const CaseRecord&)>& accepts);

/// True for the tags of domain classes (they hold '='), which campaigns summarise rather than list.
bool is_domain_tag(const std::string& tag);

/// The classes `accepts` takes some record of, found by moving one dimension of an accepted `base` at a
/// time into each class (tags).
std::vector<std::string> accepted_classes(const CaseSpace& space, const std::vector<CaseRecord>& bases,
                                          const std::function<bool(const CaseRecord&)>& accepts);

}  // namespace tunefuzz::fuzz
