// Laws of coverage, stated over the shipped configs (no GPU, no compiler): every problem class (element
// types, storage order, M, N and K with every residue that vector loads care about, padded leading
// dimensions, misaligned base addresses) is accepted by at least one point the config's space keeps; where a
// config splits K at all, a large K over a small output is split whatever its residue and alignment; and
// every config problem has a candidate. Compile-time pruning (spills, occupancy, slow paths) needs the
// compiler and is not seen here: the universal points are chosen among kernels the shipped campaigns compile
// without spills (configs/h200.yaml says which).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tuner/campaign/environment.hpp"
#include "tuner/config/config.hpp"
#include "tuner/space/space.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/kernel_template.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz {
namespace {

const std::string kConfigs = TUNEFUZZ_SOURCE_DIR "/configs/";

/// The configs that promise every class: the two cards' campaigns and the smoke campaign.
const std::vector<std::string> kUniversalConfigs = {"h100.yaml", "h200.yaml", "smoke.yaml"};

/// The vendor-weak suites, each with the card campaign whose space it searches.
const std::vector<std::pair<std::string, std::string>> kVendorWeakConfigs = {
    {"vendor-weak-h100.yaml", "h100.yaml"}, {"vendor-weak-h200.yaml", "h200.yaml"}};

// ---- the classes ---------------------------------------------------------------------------------------

/// M, N and K: 1, primes, every power of two up to 16 and a size of each residue class modulo 16 that a
/// vector width separates (odd, 2 mod 4, 4 mod 8, 8 mod 16, 0 mod 16), and a large odd K.
const std::vector<int64_t> kSizes = {1, 2, 3, 4, 6, 8, 12, 13, 16, 17, 24, 4099};

/// Leading dimensions for a stored row of `extent` elements: packed, one longer, and pitched to a whole
/// 16 elements (a row longer than it needs to be, yet aligned).
std::vector<int64_t> leading_dimensions(int64_t extent) {
  std::vector<int64_t> out = {extent, extent + 1, (extent + 16) / 16 * 16};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Base-address alignments in bytes: 256 (as allocated) down to one element.
std::vector<int64_t> alignments(int64_t element_bytes) {
  std::vector<int64_t> out;
  for (int64_t bytes : {256, 8, 4, 2, 1})
    if (bytes % element_bytes == 0) out.push_back(bytes);
  return out;
}

/// One problem class as a readable line, for the failure message.
std::string describe(const std::string& types, const GemmShape& s) {
  return types + " " + to_string(s.layout) + " M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
         " K=" + std::to_string(s.k) + " lda=" + std::to_string(s.lda) + " ldb=" + std::to_string(s.ldb) +
         ", A aligned to " + std::to_string(s.a_alignment) + " bytes, B to " + std::to_string(s.b_alignment);
}

/// Every class of one storage order for inputs of `element_bytes`, with M, N and K from `ms`, `ns`, `ks`.
template <typename Visit>
void for_each_class(Layout layout, int64_t element_bytes, const std::vector<int64_t>& ms,
                    const std::vector<int64_t>& ns, const std::vector<int64_t>& ks, Visit visit) {
  const std::vector<int64_t> aligned = alignments(element_bytes);
  for (int64_t m : ms)
    for (int64_t n : ns)
      for (int64_t k : ks) {
        GemmShape s;
        s.m = m, s.n = n, s.k = k, s.ldc = n, s.layout = layout;
        const int64_t a_extent = layout.a == Order::row ? k : m, b_extent = layout.b == Order::row ? n : k;
        for (int64_t lda : leading_dimensions(a_extent))
          for (int64_t ldb : leading_dimensions(b_extent))
            for (int64_t a_alignment : aligned)
              for (int64_t b_alignment : aligned) {
                s.lda = lda, s.ldb = ldb, s.a_alignment = a_alignment, s.b_alignment = b_alignment;
                visit(s);
              }
      }
}

/// The element types any template computes, in template order.
std::vector<TypePair> all_type_pairs() {
  std::vector<TypePair> out;
  for (const KernelTemplate* t : all_templates())
    for (const TypePair& types : t->supported_types)
      if (std::find(out.begin(), out.end(), types) == out.end()) out.push_back(types);
  return out;
}

std::string name_of(TypePair types) {
  return std::string(to_string(types.input)) + "->" + to_string(types.output);
}

bool computes(const KernelTemplate& t, TypePair types, Layout layout) {
  return std::find(t.supported_types.begin(), t.supported_types.end(), types) != t.supported_types.end() &&
         std::find(t.layouts.begin(), t.layouts.end(), layout) != t.layouts.end();
}

// ---- a config's kept points ----------------------------------------------------------------------------

/// A kept point with its template.
struct KeptPoint {
  const KernelTemplate* kernel_template;
  Point point;
};

/// Every point the config's spaces keep after the space stage's constraints, in config order, without
/// repeats (two spaces of one template may overlap).
std::vector<KeptPoint> kept_points(const Config& config) {
  std::vector<KeptPoint> out;
  for (const TemplateSearch& search : config.templates) {
    const KernelTemplate& t = find_template(search.name, search.where);
    t.compile_arch(config.gpu.arch, search.where);
    for (const Point& p : Space(t, search, config.gpu.limits).prune().kept) {
      const bool seen = std::any_of(out.begin(), out.end(), [&](const KeptPoint& k) {
        return k.kernel_template == &t && k.point == p;
      });
      if (!seen) out.push_back({&t, p});
    }
  }
  return out;
}

/// The kept points whose template computes `types` in `layout`.
std::vector<const KeptPoint*> serving(const std::vector<KeptPoint>& kept, TypePair types, Layout layout) {
  std::vector<const KeptPoint*> out;
  for (const KeptPoint& k : kept)
    if (computes(*k.kernel_template, types, layout)) out.push_back(&k);
  return out;
}

/// Looks for a point of `points` that accepts `shape`, trying first the one that accepted the last shape
/// (classes side by side are mostly accepted by the same point, which keeps the law fast).
class Acceptor {
 public:
  explicit Acceptor(std::vector<const KeptPoint*> points) : points_(std::move(points)) {}

  const KeptPoint* accepting(const GemmShape& shape) {
    for (size_t i = 0; i < points_.size(); ++i) {
      const KeptPoint* k = points_[i];
      if (!k->kernel_template->refusal(k->point, shape)) {
        std::rotate(points_.begin(), points_.begin() + static_cast<std::ptrdiff_t>(i),
                    points_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        return k;
      }
    }
    return nullptr;
  }

  /// Each template's first point's refusal of `shape`: why nothing accepted it.
  std::string refusals(const GemmShape& shape) const {
    std::string out;
    std::vector<const KernelTemplate*> seen;
    for (const KeptPoint* k : points_) {
      if (std::find(seen.begin(), seen.end(), k->kernel_template) != seen.end()) continue;
      seen.push_back(k->kernel_template);
      out += "\n    " + k->kernel_template->name + " " + k->point.str() + ": " +
             k->kernel_template->refusal(k->point, shape).value_or("accepts");
    }
    return out;
  }

 private:
  std::vector<const KeptPoint*> points_;
};

/// Up to `kShown` failures in full, then a count.
class Failures {
 public:
  void add(const std::string& line) {
    if (count_++ < kShown) text_ += "\n  " + line;
  }
  bool empty() const { return count_ == 0; }
  std::string str() const {
    return text_ + (count_ > kShown ? "\n  ... and " + std::to_string(count_ - kShown) + " more" : "");
  }

 private:
  static constexpr int kShown = 8;
  int count_ = 0;
  std::string text_;
};

/// The type pairs the refusals cannot tell apart are checked once: a refusal sees the shape, not the element
/// types, so pairs of one input width served by the same templates share their verdicts.
using ServingKey = std::tuple<int64_t, int, std::vector<const KernelTemplate*>>;

ServingKey key_of(TypePair types, Layout layout, const std::vector<const KeptPoint*>& points) {
  std::vector<const KernelTemplate*> templates;
  for (const KeptPoint* k : points)
    if (std::find(templates.begin(), templates.end(), k->kernel_template) == templates.end())
      templates.push_back(k->kernel_template);
  return {size_of(types.input), static_cast<int>(layout.a) * 2 + static_cast<int>(layout.b), templates};
}

// ---- the laws ------------------------------------------------------------------------------------------

// Law: for each universal config, every class of every element type the templates compute, in every storage
// order, is accepted by some kept point whose template computes those types.
TEST(Coverage, EveryProblemClassHasAKeptPoint) {
  for (const std::string& file : kUniversalConfigs) {
    SCOPED_TRACE(file);
    const Config config = load_config(kConfigs + file);
    const std::vector<KeptPoint> kept = kept_points(config);
    std::map<ServingKey, bool> checked;
    Failures failures;
    int64_t classes = 0;
    for (const TypePair& types : all_type_pairs())
      for (const Layout& layout : all_layouts()) {
        const std::vector<const KeptPoint*> points = serving(kept, types, layout);
        if (points.empty()) {
          failures.add("no kept point of a template that computes " + name_of(types) + " in layout " +
                       to_string(layout));
          continue;
        }
        if (!checked.emplace(key_of(types, layout, points), true).second) continue;
        Acceptor acceptor(points);
        for_each_class(layout, size_of(types.input), kSizes, kSizes, kSizes, [&](const GemmShape& s) {
          ++classes;
          if (!acceptor.accepting(s))
            failures.add("no kept point accepts " + describe(name_of(types), s) + acceptor.refusals(s));
        });
      }
    EXPECT_TRUE(failures.empty()) << file << ": uncovered problem classes:" << failures.str();
    if (failures.empty()) {
      EXPECT_GT(classes, 1'000'000) << "the enumeration shrank";
    }
  }
}

// Law: where a config splits K for a template at all, every class with a large K over a small output that
// the config serves through that template (K of each residue, padded or misaligned operands) is accepted by
// a point that splits K: one CTA never walks the whole K because K is odd.
TEST(Coverage, LargeKIsSplitWhateverItsResidue) {
  const std::vector<int64_t> small = {1, 13, 64}, large_k = {65536, 65537, 65538, 65540, 65544, 262147};
  for (const std::string& file : kUniversalConfigs) {
    SCOPED_TRACE(file);
    const Config config = load_config(kConfigs + file);
    const std::vector<KeptPoint> kept = kept_points(config);
    Failures failures;
    for (const KernelTemplate* t : all_templates()) {
      if (!t->parameter("SPLIT_K")) continue;
      std::vector<const KeptPoint*> all, splitting;
      for (const KeptPoint& k : kept)
        if (k.kernel_template == t) {
          all.push_back(&k);
          if (k.point["SPLIT_K"] > 1) splitting.push_back(&k);
        }
      if (splitting.empty()) continue;  // the config never splits K with this template
      const Precision input = t->supported_types.front().input;
      for (const Layout& layout : t->layouts) {
        Acceptor any(all), split(splitting);
        for_each_class(layout, size_of(input), small, small, large_k, [&](const GemmShape& s) {
          if (any.accepting(s) && !split.accepting(s))
            failures.add(t->name + " serves " + describe(to_string(input), s) +
                         " but no point that splits K accepts it" + split.refusals(s));
        });
      }
    }
    EXPECT_TRUE(failures.empty()) << file << ": large K left unsplit:" << failures.str();
  }
}

// Law: every problem of every shipped NVIDIA config has a candidate: a kept point whose template computes its
// types and layout and accepts its shape.
TEST(Coverage, EveryConfigProblemHasACandidate) {
  std::vector<std::string> files = kUniversalConfigs;
  for (const auto& [suite, card] : kVendorWeakConfigs) files.push_back(suite);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const Config config = load_config(kConfigs + file);
    const std::vector<KeptPoint> kept = kept_points(config);
    for (const Problem& problem : config.problems) {
      Acceptor acceptor(serving(kept, {problem.input, problem.output}, problem.layout));
      EXPECT_NE(acceptor.accepting(shape_of(problem)), nullptr)
          << problem.name << " has no candidate" << acceptor.refusals(shape_of(problem));
    }
  }
}

// Law: a vendor-weak suite measures its card's shipped space: the same GPU and the same template searches, so
// its ratios speak for the campaign a user runs.
TEST(Coverage, VendorWeakSuitesSearchTheirCardsSpace) {
  const auto spaces = [](const Config& c) {
    std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::vector<int64_t>>>>> out;
    for (const TemplateSearch& s : c.templates) {
      out.push_back({s.name, {}});
      for (const ParameterValues& v : s.space) out.back().second.push_back({v.name, v.values});
    }
    return out;
  };
  for (const auto& [suite_file, card_file] : kVendorWeakConfigs) {
    SCOPED_TRACE(suite_file);
    const Config suite = load_config(kConfigs + suite_file), card = load_config(kConfigs + card_file);
    EXPECT_EQ(suite.gpu.name, card.gpu.name);
    EXPECT_EQ(suite.gpu.arch, card.gpu.arch);
    EXPECT_EQ(suite.gpu.limits.shared_memory_per_block_optin, card.gpu.limits.shared_memory_per_block_optin);
    EXPECT_EQ(suite.gpu.limits.sm_count, card.gpu.limits.sm_count);
    EXPECT_TRUE(spaces(suite) == spaces(card)) << "the templates section differs from " << card_file;
    for (const Problem& p : suite.problems)
      for (const Problem& q : card.problems)
        EXPECT_NE(p.name, q.name) << "one name for two suites' rows makes results/targets.yaml ambiguous";
    // Plain `tune run` on the card picks the card's campaign, not the suite that names the same card.
    DeviceInfo device;
    device.name = card.gpu.name;
    const auto picked = find_config_for(device);
    ASSERT_TRUE(picked.has_value());
    EXPECT_EQ(picked->filename().string(), card_file);
  }
}

// Law: results/targets.yaml holds the suites' targets: every vendor-weak problem has a row target of at least
// 0.95 (issue 16: no row below it), and the suite's geometric mean runs over exactly its problems.
TEST(Coverage, TargetsCoverEveryVendorWeakProblem) {
  const YAML::Node targets = YAML::LoadFile(TUNEFUZZ_SOURCE_DIR "/results/targets.yaml");
  const auto listed = targets["geomeans"]["vendor_weak"]["problems"].as<std::vector<std::string>>();
  for (const auto& [suite_file, card_file] : kVendorWeakConfigs) {
    SCOPED_TRACE(suite_file);
    std::vector<std::string> names;
    for (const Problem& p : load_config(kConfigs + suite_file).problems) {
      names.push_back(p.name);
      ASSERT_TRUE(targets["targets"][p.name]) << p.name << " has no target";
      EXPECT_GE(targets["targets"][p.name].as<double>(), 0.95) << p.name;
    }
    EXPECT_EQ(names, listed);
  }
}

}  // namespace
}  // namespace tunefuzz
