// tunefuzz-hip-check: runs a config's compiled candidates on an AMD GPU through the HIP module API and checks
// them, the HIP counterpart of a smoke campaign until the fuzz and time workers speak HIP.
//
//   tunefuzz-hip-check CONFIG [--limit N] [--repeats R] [--seed S] [--jobs J]
//
// It probes the GPU first (no usable AMD GPU: exit 3, before compiling anything), checks it is the config's
// target, compiles the config's space with hiprtc through the kernel cache, then for every problem and (up to
// --limit) candidate: fills A and B with small integers (so every partial sum is exact in fp32) and C with
// NaN when beta == 0, runs once, checks the four corners, the last row and column and 256 random elements
// against a double-precision reference, then times R launches with HIP events and prints the median. Exit
// codes as `tune`: 0 all checked elements agree, 1 a mismatch, 2 bad input, 3 no usable GPU.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/campaign/environment.hpp"
#include "tuner/campaign/session.hpp"
#include "runtime/hip/gemm_simt_hip.hpp"

namespace tunefuzz::device::hip {
namespace {

struct Options {
  std::string config;
  int64_t limit = 8;
  int64_t repeats = 10;
  uint64_t seed = 1;
  int jobs = 0;
};

/// Host copies of one problem's operands, as the kernel sees them (fp32, the problem's layout).
struct HostGemm {
  GemmShape shape;
  std::vector<float> a, b, c;  ///< c: the initial C (NaN where beta == 0)
  float alpha = 1, beta = 0;

  float a_at(int64_t i, int64_t p) const {
    return shape.layout.a == Order::row ? a[i * shape.lda + p] : a[p * shape.lda + i];
  }
  float b_at(int64_t p, int64_t j) const {
    return shape.layout.b == Order::row ? b[p * shape.ldb + j] : b[j * shape.ldb + p];
  }
};

HostGemm make_operands(const Problem& problem, uint64_t seed) {
  HostGemm g;
  g.shape = shape_of(problem);
  g.alpha = static_cast<float>(problem.alpha);
  g.beta = static_cast<float>(problem.beta);
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> small(-2, 2);
  const auto fill = [&](std::vector<float>& v, size_t size) {
    v.resize(size);
    for (float& x : v) x = static_cast<float>(small(random));
  };
  fill(g.a, static_cast<size_t>(g.shape.layout.a == Order::row ? g.shape.m : g.shape.k) * g.shape.lda);
  fill(g.b, static_cast<size_t>(g.shape.layout.b == Order::row ? g.shape.k : g.shape.n) * g.shape.ldb);
  fill(g.c, static_cast<size_t>(g.shape.m) * g.shape.ldc);
  if (g.beta == 0) std::fill(g.c.begin(), g.c.end(), std::numeric_limits<float>::quiet_NaN());
  return g;
}

/// Elements to check: the corners, the last row and column, and 256 random ones.
std::vector<std::pair<int64_t, int64_t>> sample_positions(const GemmShape& s, uint64_t seed) {
  std::vector<std::pair<int64_t, int64_t>> out = {{0, 0}, {0, s.n - 1}, {s.m - 1, 0}, {s.m - 1, s.n - 1}};
  for (int64_t j = 0; j < s.n; j += std::max<int64_t>(1, s.n / 64)) out.emplace_back(s.m - 1, j);
  for (int64_t i = 0; i < s.m; i += std::max<int64_t>(1, s.m / 64)) out.emplace_back(i, s.n - 1);
  std::mt19937_64 random(seed);
  for (int e = 0; e < 256; ++e)
    out.emplace_back(static_cast<int64_t>(random() % s.m), static_cast<int64_t>(random() % s.n));
  return out;
}

/// Mismatches among the sampled elements of `out`. The partial sums of small integers are exact in fp32, so
/// only the scaling by alpha and the addition of beta·C round: two roundings of the unit roundoff each.
int64_t mismatches(const HostGemm& g, const std::vector<float>& out, uint64_t seed) {
  const double u = std::ldexp(1.0, -24);
  int64_t bad = 0;
  for (const auto& [i, j] : sample_positions(g.shape, seed)) {
    double sum = 0, magnitude = 0;
    for (int64_t p = 0; p < g.shape.k; ++p) {
      sum += static_cast<double>(g.a_at(i, p)) * g.b_at(p, j);
      magnitude += std::fabs(static_cast<double>(g.a_at(i, p)) * g.b_at(p, j));
    }
    const double c0 = g.beta == 0 ? 0.0 : g.c[i * g.shape.ldc + j];
    const double expected = g.alpha * sum + g.beta * c0;
    const double bound = 2 * u * (std::fabs(g.alpha) * magnitude + std::fabs(g.beta * c0)) + 1e-30;
    const float got = out[i * g.shape.ldc + j];
    if (!(std::fabs(got - expected) <= bound)) {
      if (bad < 3)
        std::fprintf(stderr, "  mismatch at (%lld, %lld): got %.9g, expected %.9g\n",
                     static_cast<long long>(i), static_cast<long long>(j), got, expected);
      ++bad;
    }
  }
  return bad;
}

/// Runs and checks one candidate on one problem; false on a mismatch.
bool check_candidate(const HipGemmRunner& runner, const HostGemm& g, const Options& o, const Stream& stream) {
  DeviceBuffer a(g.a.size() * sizeof(float)), b(g.b.size() * sizeof(float)), c(g.c.size() * sizeof(float));
  a.upload(g.a.data(), a.bytes());
  b.upload(g.b.data(), b.bytes());
  c.upload(g.c.data(), c.bytes());
  const HipGemm gemm{a.get(), b.get(), c.get(), g.shape, g.alpha, g.beta};
  runner.run(gemm, stream.get());
  stream.synchronize();
  std::vector<float> out(g.c.size());
  c.download(out.data(), c.bytes());
  const int64_t bad = mismatches(g, out, o.seed);
  std::vector<double> times;
  for (int64_t r = 0; r < o.repeats; ++r) {
    EventTimer timer;
    timer.start(stream.get());
    runner.run(gemm, stream.get());
    timer.stop(stream.get());
    times.push_back(timer.milliseconds());
  }
  std::sort(times.begin(), times.end());
  const double median_ms = times.empty() ? 0 : times[times.size() / 2];
  const double tflops = median_ms > 0 ? 2.0 * g.shape.m * g.shape.n * g.shape.k / (median_ms * 1e9) : 0;
  std::printf("%-8s %9.3f ms %8.2f TFLOP/s  %s\n", bad ? "MISMATCH" : "ok", median_ms, tflops,
              runner.name().c_str());
  return bad == 0;
}

int run(const Options& o) {
  const Config config = load_config(o.config);
  if (!is_amd_arch(config.gpu.arch))
    throw Error(ErrorKind::bad_input,
                "tunefuzz-hip-check runs AMD targets; this config is for " + config.gpu.arch,
                config.gpu.arch_where);
  const DeviceInfo device = query_device(0);
  if (device.arch != config.gpu.arch)
    throw Error(
        ErrorKind::bad_input,
        "the config targets " + config.gpu.arch + " but the GPU is " + device.name + " (" + device.arch + ")",
        config.gpu.arch_where);
  for (const std::string& mismatch : limit_mismatches(config.gpu, device))
    std::fprintf(stderr, "warning: %s: %s\n", o.config.c_str(), mismatch.c_str());
  const SpaceStage space = space_stage(config);
  const std::vector<CompiledCandidate> compiled = compile_candidates(config, space.candidates, o.jobs, Twins::none);
  const Device current(0);
  const Stream stream;
  bool all_agree = true;
  for (const Problem& problem : config.problems) {
    std::printf("%s: %lldx%lldx%lld\n", problem.name.c_str(), static_cast<long long>(problem.m),
                static_cast<long long>(problem.n), static_cast<long long>(problem.k));
    const HostGemm operands = make_operands(problem, o.seed);
    int64_t ran = 0;
    for (const CompiledCandidate& c : compiled) {
      if (ran >= o.limit) break;
      const TypePair types{problem.input, problem.output};
      if (c.status != CompileStatus::compiled || !(c.candidate.types == types)) continue;
      const auto runner = load_candidate(c.candidate, read_whole_file(c.image));
      if (runner->refusal(operands.shape)) continue;
      all_agree = check_candidate(*runner, operands, o, stream) && all_agree;
      ++ran;
    }
  }
  return all_agree ? 0 : 1;
}

}  // namespace
}  // namespace tunefuzz::device::hip

int main(int argc, char** argv) {
  using namespace tunefuzz;
  device::hip::Options o;
  CLI::App app{"Runs a config's candidates on an AMD GPU through HIP and checks sampled elements"};
  app.add_option("config", o.config, "campaign config for a gfx* target")->required();
  app.add_option("--limit", o.limit, "candidates per problem (default 8)");
  app.add_option("--repeats", o.repeats, "timed launches per candidate and problem (default 10)");
  app.add_option("--seed", o.seed, "seed of the operands and sampled positions (default 1)");
  app.add_option("-j,--jobs", o.jobs, "compiler threads (default: all cores)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return device::hip::run(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return exit_code_for(e.kind());
  }
}
