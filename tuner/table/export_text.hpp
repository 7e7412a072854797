// The fixed text `tune export` writes around the generated tables: the parts of the C++ header that do not
// depend on the tables (its lookup rule, types and lookup code), and the files of the CMake package. Only
// tuner/table/export.cpp includes it.
#pragma once

namespace tunefuzz::export_text {

/// The generated header's opening after its list of sources: the lookup rule (the one kHeaderLookup
/// implements; @DEFAULT_POINT@ is replaced), includes, and the first types.
inline constexpr const char* kHeaderRule = R"(//
// Lookup rule: lookup(card, arch, m, n, k, precision, output, layout) answers with the first that applies:
//   1. exact          the first row of the same card with the same m, n, k, precision, output and layout;
//   2. nearest_shape  among the rows of the same card, precision, output and layout, the one minimising
//                     |ln m - ln m'| + |ln n - ln n'| + |ln k - ln k'| (ties: the first row);
//   3. same_arch      the same as 2 over the rows of every card of the same arch;
//   4. safe_default   template gemm_mma at its default parameters; candidate is that point's id for the
//                     requested precision and output, empty when the template does not compute them.
//                     That point is @DEFAULT_POINT@;
//                     like any point it refuses problems it cannot serve (e.g. K or N not a multiple of VEC).
// layout is the storage orders of A and B, A first ("RR", "RC", "CR" or "CC"; C is row-major), "RR" when left
// out. It is part of the key at steps 1 to 3: a winner tuned for one layout is never the answer for another,
// even of the same shape, so a layout no row has gets the safe default (gemm_mma_fp8 reads only "RC", so fp8
// rows are found by passing "RC").
// Rows are in the order of the tables given to `tune export`, each table's rows in its order; rows without a
// winner are left out. Strings compare exactly ("NVIDIA H200", "sm_90", "bf16", "RR"). Needs C++17 and
// nothing beyond the standard library; the tables and lookup() are constexpr.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace tunefuzz_tables {

/// Which step of the lookup rule answered.
enum class Source { exact, nearest_shape, same_arch, safe_default };

constexpr std::string_view to_string(Source source) {
  switch (source) {
    case Source::exact: return "exact";
    case Source::nearest_shape: return "nearest_shape";
    case Source::same_arch: return "same_arch";
    case Source::safe_default: return "safe_default";
  }
  return "unknown";
}

/// One tunable of a configuration, named as in the kernel template (BM, BN, STAGES, ...).
struct Parameter {
  std::string_view name;
  long long value;
};
)";

/// The types that follow kMaxParameters: Row, DefaultCandidate, Choice.
inline constexpr const char* kHeaderTypes = R"(using Parameters = std::array<Parameter, kMaxParameters>;

/// One tuned problem: the card it was measured on, its shape and element types, and its winner.
struct Row {
  std::string_view card, arch, problem;
  long long m, n, k;
  std::string_view precision, output, layout;  ///< A and B, C, storage orders of A and B
  std::string_view template_name, candidate;   ///< the winner: template and candidate id
  Parameters parameters;                       ///< the first parameter_count entries are the winner's
  std::size_t parameter_count;
  double tflops;  ///< the winner's median TFLOP/s on `card`
  std::string_view template_hash;  ///< SHA-256 of the winner's template source when tuned (the table's)
  double alpha, beta;              ///< the tuned problem's scalars (beta != 0 reads C)
  std::string_view code_sha256;    ///< the winner's code digest when tuned; empty when the table has none
};

/// The fallback's candidate id for one pair of element types the template computes.
struct DefaultCandidate {
  std::string_view precision, output, candidate;
};

/// What lookup() chose.
struct Choice {
  Source source;
  std::string_view template_name;
  std::string_view candidate;  ///< empty for safe_default when the template lacks the element types
  std::string_view card;       ///< the row's card and problem; empty for safe_default
  std::string_view problem;
  Parameters parameters;
  std::size_t parameter_count;
  double tflops;  ///< measured on `card` for `problem`; 0 for safe_default

  /// The value of parameter `name`, or -1 when the configuration has no such parameter.
  constexpr long long parameter(std::string_view name) const {
    for (std::size_t i = 0; i < parameter_count; ++i)
      if (parameters[i].name == name) return parameters[i].value;
    return -1;
  }
};
)";

/// After the tables: the lookup rule as code.
inline constexpr const char* kHeaderLookup = R"(
namespace detail {

/// Natural logarithm of max(value, 1), constexpr (std::log is not): halve into [1, 2), then
/// ln x = 2 atanh((x - 1) / (x + 1)) by its series.
constexpr double ln(long long value) {
  double x = value < 1 ? 1.0 : static_cast<double>(value);
  double result = 0;
  while (x >= 2) {
    x /= 2;
    result += 0.69314718055994530942;
  }
  const double t = (x - 1) / (x + 1);
  double power = t;
  for (int i = 1; i < 40; i += 2) {
    result += 2 * power / i;
    power *= t * t;
  }
  return result;
}

constexpr double gap(long long a, long long b) {
  const double d = ln(a) - ln(b);
  return d < 0 ? -d : d;
}

/// The row passing `accept` nearest to (m, n, k) in log space, the first on ties; nullptr when none passes.
template <class Accept>
constexpr const Row* nearest(long long m, long long n, long long k, Accept accept) {
  const Row* best = nullptr;
  double best_distance = 0;
  for (const Row& row : kRows) {
    if (!accept(row)) continue;
    const double distance = gap(m, row.m) + gap(n, row.n) + gap(k, row.k);
    if (best == nullptr || distance < best_distance) {
      best = &row;
      best_distance = distance;
    }
  }
  return best;
}

constexpr Choice choose(const Row& row, Source source) {
  return Choice{source,         row.template_name, row.candidate,       row.card,
                row.problem,    row.parameters,    row.parameter_count, row.tflops};
}

}  // namespace detail

/// The tuned configuration for a GEMM (C = A B, m x n x k) on a card, by the rule at the top of this file.
constexpr Choice lookup(std::string_view card, std::string_view arch, long long m, long long n, long long k,
                        std::string_view precision, std::string_view output, std::string_view layout = "RR") {
  const auto same_types = [&](const Row& row) {
    return row.precision == precision && row.output == output && row.layout == layout;
  };
  for (const Row& row : kRows)
    if (row.card == card && same_types(row) && row.m == m && row.n == n && row.k == k)
      return detail::choose(row, Source::exact);
  if (const Row* row = detail::nearest(m, n, k, [&](const Row& r) { return r.card == card && same_types(r); }))
    return detail::choose(*row, Source::nearest_shape);
  if (const Row* row = detail::nearest(m, n, k, [&](const Row& r) { return r.arch == arch && same_types(r); }))
    return detail::choose(*row, Source::same_arch);
  std::string_view candidate;
  for (const DefaultCandidate& entry : kDefaultCandidates)
    if (entry.precision == precision && entry.output == output) candidate = entry.candidate;
  return Choice{Source::safe_default, kDefaultTemplate, candidate, {}, {}, kDefaultParameters,
                kDefaultParameterCount, 0};
}

}  // namespace tunefuzz_tables
)";

/// The package's CMakeLists.txt after its comment; @VERSION@, @LIBRARY@ (an INTERFACE library, or a static one
/// of the images) and @SCOPE@ (INTERFACE or PUBLIC) are replaced.
inline constexpr const char* kPackageCMake = R"cmake(
cmake_minimum_required(VERSION 3.14)
project(tunefuzz_tables VERSION @VERSION@ LANGUAGES CXX)

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The tables are one header (tables.hpp) and the kernels' images (kernels.hpp; src/kernels.cpp when they were
# compiled ahead of time): the library carries their include path and the C++17 requirement.
@LIBRARY@add_library(tunefuzz::tables ALIAS tables)
target_include_directories(tables @SCOPE@ $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                          $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(tables @SCOPE@ cxx_std_17)

# find_package(tunefuzz CONFIG) finds share/cmake/tunefuzz under the install prefix. Installed beside the
# tunefuzz runtime, these tables replace the ones it ships (the same export set and config file).
set(TUNEFUZZ_TABLES_CONFIG_DIR ${CMAKE_INSTALL_DATADIR}/cmake/tunefuzz)
install(TARGETS tables EXPORT tunefuzzTablesTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The headers replace those already installed even when these carry the same time stamp (cmake --install
# skips a file whose destination has the source's modification time, whatever its content).
install(CODE "file(REMOVE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}/tunefuzz/tables.hpp\"
                          \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}/tunefuzz/kernels.hpp\")")
install(FILES include/tunefuzz/tables.hpp include/tunefuzz/kernels.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tunefuzz)
install(EXPORT tunefuzzTablesTargets NAMESPACE tunefuzz:: DESTINATION ${TUNEFUZZ_TABLES_CONFIG_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tunefuzzConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES cmake/tunefuzzConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/tunefuzzConfigVersion.cmake
        DESTINATION ${TUNEFUZZ_TABLES_CONFIG_DIR})
)cmake";

/// The package's cmake/tunefuzzConfig.cmake: the same text as tunefuzz's own (cmake/tunefuzzConfig.cmake;
/// tests/test_export.cpp checks it), so the runtime and a tables package may share an install prefix.
inline constexpr const char* kPackageConfig =
    R"(# find_package(tunefuzz CONFIG): tunefuzz::runtime (the runtime library, where tunefuzz is installed) and
# tunefuzz::tables (tuned tables: those tunefuzz ships, or a `tune export --format cmake` package installed
# into the same prefix over them). tunefuzz and exported table packages install this very file, so either may
# be installed first. tests/test_export.cpp checks that the two copies are the same.
include(CMakeFindDependencyMacro)
file(GLOB _tunefuzz_target_files "${CMAKE_CURRENT_LIST_DIR}/tunefuzz*Targets.cmake")
foreach(_tunefuzz_file IN LISTS _tunefuzz_target_files)
  if(_tunefuzz_file MATCHES "RuntimeTargets\\.cmake$")
    find_dependency(CUDAToolkit)  # the runtime's interface: the CUDA driver and the toolkit's headers
  endif()
  include("${_tunefuzz_file}")
endforeach()
)";

/// The package's README.md.
inline constexpr const char* kPackageReadme = R"(# tunefuzz tables

Tuned GEMM configurations exported by `tune export --format cmake`: one C++17 header,
`include/tunefuzz/tables.hpp`, with constexpr tables and `tunefuzz_tables::lookup(...)` (its lookup rule is
written at the top of the header).

```sh
cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/opt/tunefuzz && cmake --build build && cmake --install build
```

Then, in a project built with `-DCMAKE_PREFIX_PATH=/opt/tunefuzz`:

```cmake
find_package(tunefuzz CONFIG REQUIRED)
target_link_libraries(app PRIVATE tunefuzz::tables)
```

```cpp
#include <tunefuzz/tables.hpp>
constexpr auto choice = tunefuzz_tables::lookup("NVIDIA H200", "sm_90", 4096, 4096, 4096, "bf16", "bf16");
static_assert(choice.parameter("BM") > 0);
// The last argument is the layout, the storage orders of A and B ("RR" when left out): A and B column-major.
constexpr auto cc = tunefuzz_tables::lookup("NVIDIA H200", "sm_90", 1000, 1000, 1000, "bf16", "bf16", "CC");
```
)";

}  // namespace tunefuzz::export_text
