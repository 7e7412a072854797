// Dimensions of a case record, set one at a time, and the classes the domain law counts over them.
#include "fuzz/domain.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "fuzz/generators.hpp"

namespace tunefuzz::fuzz {

namespace {

constexpr int64_t kProbeSize =
    256;  // M, N and K of a probe base: a multiple of every unit and residue modulus
constexpr int64_t kWidestAccessBytes = 16;

bool is_size(Dimension d) {
  return d == Dimension::m || d == Dimension::n || d == Dimension::k;
}

bool is_leading(Dimension d) {
  return d == Dimension::lda || d == Dimension::ldb || d == Dimension::ldc;
}

int64_t tile_of(Dimension d, const CaseSpace& space) {
  return d == Dimension::m ? space.tile_m : d == Dimension::n ? space.tile_n : space.tile_k;
}

/// The stored row length a leading dimension must span.
int64_t extent_of(const CaseRecord& r, Dimension leading) {
  if (leading == Dimension::lda) return r.layout.a == Order::row ? r.k : r.m;
  if (leading == Dimension::ldb) return r.layout.b == Order::row ? r.n : r.k;
  return r.n;
}

int64_t& padding_of(CaseRecord& r, Dimension leading) {
  return leading == Dimension::lda ? r.lda_pad : leading == Dimension::ldb ? r.ldb_pad : r.ldc_pad;
}

/// Sets the padding so the leading dimension is `ld`, grown by whole moduli where that is below its row.
void keep_leading(CaseRecord& r, Dimension leading, int64_t ld, int64_t modulus) {
  const int64_t extent = extent_of(r, leading);
  if (ld < extent) ld += (extent - ld + modulus - 1) / modulus * modulus;
  padding_of(r, leading) = ld - extent;
}

}  // namespace

const char* to_string(Dimension d) {
  switch (d) {
    case Dimension::m:
      return "m";
    case Dimension::n:
      return "n";
    case Dimension::k:
      return "k";
    case Dimension::lda:
      return "lda";
    case Dimension::ldb:
      return "ldb";
    case Dimension::ldc:
      return "ldc";
    case Dimension::a_offset:
      return "a_offset";
    case Dimension::b_offset:
      return "b_offset";
    case Dimension::c_offset:
      return "c_offset";
  }
  return "?";
}

int64_t value_of(const CaseRecord& r, Dimension d) {
  switch (d) {
    case Dimension::m:
      return r.m;
    case Dimension::n:
      return r.n;
    case Dimension::k:
      return r.k;
    case Dimension::lda:
      return r.lda();
    case Dimension::ldb:
      return r.ldb();
    case Dimension::ldc:
      return r.ldc();
    case Dimension::a_offset:
      return r.a_offset;
    case Dimension::b_offset:
      return r.b_offset;
    case Dimension::c_offset:
      return r.c_offset;
  }
  return 0;
}

std::optional<CaseRecord> with_value(const CaseRecord& record, Dimension d, int64_t value,
                                     const CaseSpace& space) {
  if (value < 0) return std::nullopt;
  CaseRecord r = record;
  if (is_leading(d)) {
    if (value < extent_of(r, d)) return std::nullopt;
    padding_of(r, d) = value - extent_of(r, d);
    return r;
  }
  if (d == Dimension::a_offset) r.a_offset = value;
  if (d == Dimension::b_offset) r.b_offset = value;
  if (d == Dimension::c_offset) r.c_offset = value;
  if (!is_size(d)) return r;
  (d == Dimension::m ? r.m : d == Dimension::n ? r.n : r.k) = value;
  for (Dimension leading : {Dimension::lda, Dimension::ldb, Dimension::ldc})
    keep_leading(r, leading, value_of(record, leading), residue_modulus(leading, space));
  return r;
}

int64_t residue_modulus(Dimension d, const CaseSpace& space) {
  const bool of_c = d == Dimension::ldc || d == Dimension::c_offset;
  return std::max<int64_t>(1, kWidestAccessBytes / (of_c ? space.output_bytes : space.input_bytes));
}

namespace {

/// The multiple is_aligned asks of a dimension: its residue modulus, and for N C's as well (N is C's row).
int64_t alignment_of(Dimension d, const CaseSpace& space) {
  const int64_t modulus = residue_modulus(d, space);
  return d == Dimension::n ? std::lcm(modulus, residue_modulus(Dimension::ldc, space)) : modulus;
}

/// The sizes that are some operand's stored row: N (C, and row-major B), K (row-major A, column-major B),
/// M only when A is column-major.
bool is_row_length(Dimension d, const CaseRecord& r) {
  return d == Dimension::n || d == Dimension::k || (d == Dimension::m && r.layout.a == Order::col);
}

}  // namespace

bool is_aligned(const CaseRecord& r, const CaseSpace& space) {
  for (Dimension d : kDimensions) {
    if (is_size(d) && !is_row_length(d, r)) continue;
    if (value_of(r, d) % alignment_of(d, space) != 0) return false;
  }
  return true;
}

CaseRecord aligned(CaseRecord r, const Steps& steps, const CaseSpace& space) {
  const auto unit = [&](Dimension d) {
    return std::lcm(std::max<int64_t>(1, steps[static_cast<size_t>(d)]), alignment_of(d, space));
  };
  for (Dimension d : {Dimension::m, Dimension::n, Dimension::k}) {
    int64_t& v = d == Dimension::m ? r.m : d == Dimension::n ? r.n : r.k;
    if (v > 0 && is_row_length(d, r)) v = std::max(unit(d), v / unit(d) * unit(d));
  }
  for (Dimension d : {Dimension::lda, Dimension::ldb, Dimension::ldc}) {
    const int64_t extent = extent_of(r, d), u = unit(d);
    padding_of(r, d) = (std::max<int64_t>(1, extent + padding_of(r, d)) + u - 1) / u * u - extent;
  }
  r.a_offset = r.a_offset / unit(Dimension::a_offset) * unit(Dimension::a_offset);
  r.b_offset = r.b_offset / unit(Dimension::b_offset) * unit(Dimension::b_offset);
  r.c_offset = r.c_offset / unit(Dimension::c_offset) * unit(Dimension::c_offset);
  return r;
}

std::string DomainClass::tag() const {
  const std::string name = fuzz::to_string(dimension);
  switch (kind) {
    case Kind::residue:
      return name + "%" + std::to_string(modulus) + "=" + std::to_string(residue);
    case Kind::zero:
      return name + "=0";
    case Kind::whole_tiles:
      return name + "_tile=whole";
    case Kind::partial_tile:
      return name + "_tile=tail";
  }
  return "?";
}

bool DomainClass::contains(const CaseRecord& record, const CaseSpace& space) const {
  const int64_t value = value_of(record, dimension);
  switch (kind) {
    case Kind::residue:
      return value % modulus == residue;
    case Kind::zero:
      return value == 0;
    case Kind::whole_tiles:
      return value > 0 && value % tile_of(dimension, space) == 0;
    case Kind::partial_tile:
      return value % tile_of(dimension, space) != 0;
  }
  return false;
}

std::vector<DomainClass> domain_classes(const CaseSpace& space) {
  std::vector<DomainClass> out;
  for (Dimension d : kDimensions) {
    const int64_t modulus = residue_modulus(d, space);
    for (int64_t r = 0; r < modulus; ++r) out.push_back({d, DomainClass::Kind::residue, r, modulus});
    if (!is_size(d)) continue;
    out.push_back({d, DomainClass::Kind::zero});
    out.push_back({d, DomainClass::Kind::whole_tiles});
    out.push_back({d, DomainClass::Kind::partial_tile});
  }
  return out;
}

std::vector<std::string> domain_tags(const CaseRecord& record, const CaseSpace& space) {
  std::vector<std::string> tags;
  for (Dimension d : kDimensions) {
    const int64_t value = value_of(record, d), modulus = residue_modulus(d, space);
    tags.push_back(DomainClass{d, DomainClass::Kind::residue, value % modulus, modulus}.tag());
    if (!is_size(d)) continue;
    if (value == 0) tags.push_back(DomainClass{d, DomainClass::Kind::zero}.tag());
    const DomainClass::Kind tiles =
        value % tile_of(d, space) ? DomainClass::Kind::partial_tile : DomainClass::Kind::whole_tiles;
    if (value > 0) tags.push_back(DomainClass{d, tiles}.tag());
  }
  return tags;
}

std::vector<int64_t> class_values(const DomainClass& c, const CaseRecord& base, const CaseSpace& space) {
  const int64_t own = value_of(base, c.dimension);
  switch (c.kind) {
    case DomainClass::Kind::zero:
      return {0};
    case DomainClass::Kind::residue: {
      const int64_t near = own - own % c.modulus + c.residue;
      return {near, near + c.modulus, c.residue + c.modulus, c.residue + 4 * c.modulus};
    }
    case DomainClass::Kind::whole_tiles: {
      const int64_t tile = tile_of(c.dimension, space);
      return {tile, 2 * tile, std::max<int64_t>(1, own / tile) * tile};
    }
    case DomainClass::Kind::partial_tile: {
      const int64_t tile = tile_of(c.dimension, space);
      std::vector<int64_t> values;
      for (int64_t j = 1; j <= kWidestAccessBytes; ++j) values.push_back(tile + j);
      return values;
    }
  }
  return {};
}

std::vector<CaseRecord> probe_bases(const CaseSpace& space, const Layout& layout) {
  std::vector<CaseRecord> bases;
  // Sizes of a whole 16-byte unit at several scales: a candidate that takes only small M (gemm_skinny,
  // M <= 128) refuses the largest and is probed from the smaller ones.
  for (const int64_t size : {kProbeSize, kProbeSize / 4, kProbeSize / 16}) {
    CaseRecord base;
    base.m = base.n = base.k = size;
    base.layout = layout;
    bases.push_back(base);
    for (Dimension d : kDimensions)
      if (const auto moved = with_value(base, d, value_of(base, d) + 1, space)) bases.push_back(*moved);
  }
  // A single row, for a candidate that takes M up to one tile of 8 or more (a point that swaps its operands).
  // A column-major A keeps a 16-element leading dimension: with lda = 1 its one row would be read along K
  // (canonical_form), another storage order than the one probed.
  CaseRecord row;
  row.m = 1;
  row.n = row.k = kProbeSize / 16;
  row.layout = layout;
  if (layout.a == Order::col) row.lda_pad = kProbeSize / 16 - 1;
  bases.push_back(row);
  return bases;
}

int64_t probe_max_m(const CaseSpace& space, const Layout& layout,
                    const std::function<bool(const CaseRecord&)>& accepts) {
  if (!accepts) return 0;
  const std::vector<CaseRecord> bases = probe_bases(space, layout);
  const auto base = std::find_if(bases.begin(), bases.end(), accepts);
  if (base == bases.end()) return 0;
  const auto takes = [&](int64_t m) {
    const auto moved = with_value(*base, Dimension::m, m, space);
    return moved && accepts(*moved);
  };
  constexpr int64_t kNoBound = int64_t{1} << 20;
  int64_t low = base->m, high = 2 * low;  // low is taken; find the first refused above it
  while (high <= kNoBound && takes(high)) low = high, high *= 2;
  if (high > kNoBound) return 0;
  while (high - low > 1) {
    const int64_t middle = low + (high - low) / 2;
    (takes(middle) ? low : high) = middle;
  }
  return low;
}

namespace {

/// The steps `accepts` takes along each dimension, moving one dimension of each accepted base at a time
/// through the residues modulo 16 elements (sizes kept above zero); nullopt when no base is accepted.
std::optional<Steps> steps_from(const std::vector<CaseRecord>& bases, const CaseSpace& space,
                                const std::function<bool(const CaseRecord&)>& accepts) {
  std::vector<CaseRecord> accepted;
  for (const CaseRecord& base : bases)
    if (!accepts || accepts(base)) accepted.push_back(base);
  if (accepted.empty()) return std::nullopt;
  Steps steps{};
  for (Dimension d : kDimensions) {
    int64_t step = kWidestAccessBytes;
    for (int64_t residue = 1; residue < kWidestAccessBytes; ++residue) {
      if (residue % step == 0) continue;  // the step found so far divides it: nothing new to learn
      for (const CaseRecord& base : accepted) {
        const int64_t own = value_of(base, d);
        // A size below one unit (the single row) moves to the residue itself: a candidate that takes M up to
        // one tile refuses it one unit further up.
        const int64_t value =
            is_size(d) && own < kWidestAccessBytes
                ? residue
                : own - own % kWidestAccessBytes + (is_size(d) ? kWidestAccessBytes : 0) + residue;
        const auto moved = with_value(base, d, value, space);
        if (moved && (!accepts || accepts(*moved))) {
          step = std::gcd(step, residue);
          break;
        }
      }
    }
    steps[static_cast<size_t>(d)] = step;
  }
  return steps;
}

}  // namespace

std::optional<Steps> probe_steps(const CaseSpace& space, const Layout& layout,
                                 const std::function<bool(const CaseRecord&)>& accepts) {
  return steps_from(probe_bases(space, layout), space, accepts);
}

std::optional<Steps> probe_zero_steps(const CaseSpace& space, const Layout& layout,
                                      const std::function<bool(const CaseRecord&)>& accepts) {
  std::optional<Steps> out;
  for (Dimension zero : {Dimension::m, Dimension::n, Dimension::k}) {
    std::vector<CaseRecord> bases;
    for (const CaseRecord& base : probe_bases(space, layout))
      if (value_of(base, zero) % (kProbeSize / 16) == 0)  // not a base moved along this dimension
        if (const auto emptied = with_value(base, zero, 0, space)) bases.push_back(*emptied);
    const auto steps = steps_from(bases, space, accepts);
    if (!steps) continue;
    if (!out) out = steps;
    for (size_t d = 0; d < out->size(); ++d)
      if (kDimensions[d] != zero) (*out)[d] = std::gcd((*out)[d], (*steps)[d]);
  }
  return out;
}

bool is_domain_tag(const std::string& tag) {
  return tag.find('=') != std::string::npos;
}

std::vector<std::string> accepted_classes(const CaseSpace& space, const std::vector<CaseRecord>& bases,
                                          const std::function<bool(const CaseRecord&)>& accepts) {
  std::vector<std::string> out;
  for (const DomainClass& c : domain_classes(space)) {
    bool found = false;
    for (const CaseRecord& base : bases) {
      if (accepts && !accepts(base)) continue;
      for (int64_t value : class_values(c, base, space)) {
        const auto moved = with_value(base, c.dimension, value, space);
        if (moved && c.contains(*moved, space) && (!accepts || accepts(*moved))) {
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (found) out.push_back(c.tag());
  }
  return out;
}

}  // namespace tunefuzz::fuzz
