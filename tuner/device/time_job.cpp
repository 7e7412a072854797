// The time job: one problem, cuBLAS and every candidate on the same inputs in the same process. Each
// implementation is first verified (Freivalds projections plus exact samples on tile boundaries, against the
// inputs), then timed with warm-up, cold L2 and the median of many repeats.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "fuzz/matrix.hpp"
#include "fuzz/oracle.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "tuner/device/fuzzing.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/device/progress_log.hpp"
#include "runtime/cuda/runner.hpp"
#include "tuner/device/timer.hpp"

namespace tunefuzz::device {

namespace {

// Uniform values in [-1, 1) rounded to the matrix type, filled by all cores (the big problems hold 10^8+
// elements). Deterministic for a seed and thread count.
void fill_uniform(fuzz::HostMatrix& matrix, uint64_t seed) {
  const int64_t rows = matrix.rows();
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(seed * 1000003 + t);
      std::uniform_real_distribution<double> uniform(-1.0, 1.0);
      for (int64_t i = t; i < rows; i += threads)
        for (int64_t j = 0; j < matrix.cols(); ++j) matrix.set(i, j, uniform(rng));
    });
  for (auto& thread : pool) thread.join();
}

}  // namespace

TimeResult run_time_job(const TimeJob& job, const std::function<void(const TimeResult&)>& write_partial) {
  const DeviceInfo device = query_device();
  Context context;
  Stream stream;
  Timer timer(stream.get(), device.l2_bytes);
  ProgressLog progress(job.progress);
  const Problem& problem = job.problem;
  const TypePair types{problem.input, problem.output};

  const GemmShape shape = shape_of(problem);
  // A and B logical (m×k, k×n) for the check; the device holds them in the problem's storage order.
  fuzz::HostMatrix a(types.input, shape.m, shape.k, shape.k);
  fuzz::HostMatrix b(types.input, shape.k, shape.n, shape.n);
  fuzz::HostMatrix c(types.output, shape.m, shape.n, shape.ldc);
  fill_uniform(a, job.seed + 1);
  fill_uniform(b, job.seed + 2);
  if (problem.beta != 0.0) fill_uniform(c, job.seed + 3);
  const auto upload = [](const fuzz::HostMatrix& logical, Order order, int64_t ld) {
    const fuzz::HostMatrix image = order == Order::row ? logical : fuzz::transposed(logical, ld);
    DeviceBuffer buffer(image.size_bytes());
    buffer.upload(image.bytes(), image.size_bytes());
    return buffer;
  };
  DeviceBuffer a_dev = upload(a, shape.layout.a, shape.lda), b_dev = upload(b, shape.layout.b, shape.ldb);
  DeviceBuffer c_dev(c.size_bytes()), workspace;
  const auto reset_c = [&] {
    if (problem.beta != 0.0)
      c_dev.upload(c.bytes(), c.size_bytes());
    else
      check(cuMemsetD8(c_dev.get(), 0xFF, c.size_bytes()), "poisoning C with NaN");  // all-ones bits: NaN
  };

  DeviceGemm gemm{a_dev.get(),
                  b_dev.get(),
                  c_dev.get(),
                  shape,
                  static_cast<float>(problem.alpha),
                  static_cast<float>(problem.beta),
                  {}};
  const fuzz::GemmOperands operands{&a, &b, &c, problem.alpha, problem.beta};
  const fuzz::ProjectedCheck projection(operands, 2, job.seed + 17);  // the inputs' projections, once
  const double flops =
      2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);

  const auto reserve_workspace = [&](const GemmRunner& runner) {
    const int64_t workspace_bytes = runner.workspace_bytes(shape);
    if (workspace_bytes > 0) workspace.reserve(static_cast<size_t>(workspace_bytes));
  };
  const auto run_once = [&](const GemmRunner& runner) {
    reserve_workspace(runner);
    runner.run(gemm, workspace.get(), stream.get());
    stream.synchronize();
  };
  const auto time_it = [&](const GemmRunner& runner, int64_t warmup, int64_t repeats, TimedEntry& entry) {
    reserve_workspace(runner);
    const TimingStats stats = timer.time([&](CUstream s) { runner.run(gemm, workspace.get(), s); },
                                         static_cast<int>(warmup), static_cast<int>(repeats));
    entry.median_ms = stats.median_ms;
    entry.min_ms = stats.min_ms;
    entry.max_ms = stats.max_ms;
    entry.tflops = flops / (stats.median_ms * 1e-3) / 1e12;
  };
  // A failure the context survives marks the entry; a poisoning fault propagates and ends the process.
  const auto guarded = [&](TimedEntry& entry, const std::function<void()>& step) {
    try {
      step();
      return true;
    } catch (const CudaError& e) {
      if (e.poisons_context()) throw;
      entry.status = "failed";
      entry.message = e.what();
      return false;
    }
  };
  // Run once on fresh C, check the output against the inputs, then time with the full repeats. A candidate
  // outside the bound is not timed; the baseline is timed anyway (it sets the pace, it does not compete: cuBLAS
  // rounding alpha·AB before adding beta·C can land a few ulps outside an fp32-accumulation bound), and its
  // entry keeps what the check said.
  const auto verify_and_time = [&](const GemmRunner& runner, const fuzz::ArithmeticModel& model,
                                   TimedEntry& entry, int64_t tile_m, int64_t tile_n, bool is_baseline) {
    progress.write("verify " + entry.id);
    reset_c();
    if (!guarded(entry, [&] { run_once(runner); })) return;
    fuzz::HostMatrix out(types.output, shape.m, shape.n, shape.ldc);
    c_dev.download(out.bytes(), out.size_bytes());
    const fuzz::Verdict verdict = projection.check(out, model, 512, tile_m, tile_n, job.seed + 17);
    entry.worst_error_ratio = verdict.worst_ratio;
    if (!verdict.pass) {
      entry.message = verdict.summary();
      if (!is_baseline) {
        entry.status = "incorrect";
        return;
      }
      entry.message = "outside the bound, timed anyway: " + entry.message;
    }
    progress.write("time " + entry.id);
    if (guarded(entry, [&] { time_it(runner, job.warmup, job.repeats, entry); })) entry.status = "timed";
  };

  TimeResult result;
  CublasRunner cublas(types, problem.beta, stream.get());
  result.baseline_version = cublas.version();
  result.baseline.id = "cublas";
  if (auto why = cublas.refusal(shape)) {
    result.baseline.status = "refused";
    result.baseline.message = *why;
  } else {
    verify_and_time(cublas, {Precision::fp32, types.output, shape.k}, result.baseline, 0, 0, true);
  }
  // The bandwidth floor: a copy moving the problem's least traffic (half read, half written), L2 flushed.
  result.traffic.bytes =
      static_cast<int64_t>(a.size_bytes() + b.size_bytes() + c.size_bytes() * (problem.beta != 0.0 ? 2 : 1));
  {
    const size_t half = static_cast<size_t>(result.traffic.bytes / 2);
    DeviceBuffer from(half), to(half);
    progress.write("copy " + std::to_string(half) + " bytes");
    const TimingStats copy = timer.time(
        [&](CUstream s) { check(cuMemcpyDtoDAsync(to.get(), from.get(), half, s), "cuMemcpyDtoDAsync"); },
        static_cast<int>(job.warmup), static_cast<int>(job.repeats));
    result.traffic.copy_ms = copy.median_ms;
  }
  write_partial(result);

  // Screening: every candidate the problem suits, a few timed launches each.
  struct Loaded {
    std::unique_ptr<GemmRunner> runner;
    Candidate candidate;
    size_t entry;
  };
  std::vector<Loaded> screened;
  for (const TimeJob::Entry& e : job.candidates) {
    TimedEntry entry;
    entry.id = e.candidate;
    const Candidate candidate = parse_candidate_id(e.candidate);
    if (candidate.perturb != 0)
      throw Error(ErrorKind::bad_input, "a schedule-perturbed image is fuzzed, never timed: " + e.candidate);
    auto runner = load_candidate(candidate, read_whole_file(e.image));
    if (auto why = runner->refusal(shape)) {
      entry.status = "refused";
      entry.message = *why;
    } else {
      progress.write("screen " + entry.id);
      if (guarded(entry, [&] { time_it(*runner, 1, job.screen_repeats, entry); })) {
        entry.status = "screened";
        screened.push_back({std::move(runner), candidate, result.entries.size()});
      }
    }
    result.entries.push_back(entry);
    write_partial(result);
  }

  // Finalists: the fastest screened candidates, verified against the inputs and timed in full.
  std::sort(screened.begin(), screened.end(), [&](const Loaded& x, const Loaded& y) {
    return result.entries[x.entry].median_ms < result.entries[y.entry].median_ms;
  });
  const size_t finalists =
      job.finalists > 0 ? std::min<size_t>(job.finalists, screened.size()) : screened.size();
  for (size_t i = 0; i < finalists; ++i) {
    const Loaded& f = screened[i];
    verify_and_time(*f.runner, arithmetic_model(f.candidate, types.output, shape.k), result.entries[f.entry],
                    f.candidate.point["BM"], f.candidate.point["BN"], false);
    write_partial(result);
  }

  // Finalists within kCloseFraction of the best are timed again, taking turns with each other and with
  // cuBLAS, so that the card's drift over a long run can pick neither the winner nor the ratio to the
  // baseline; the coordinator breaks remaining ties toward the cheaper config.
  constexpr double kCloseFraction = 0.03;
  double best = 0;
  for (size_t i = 0; i < finalists; ++i) {
    const TimedEntry& e = result.entries[screened[i].entry];
    if (e.status == "timed" && (best == 0 || e.median_ms < best)) best = e.median_ms;
  }
  std::vector<const Loaded*> close;
  for (size_t i = 0; i < finalists; ++i) {
    const TimedEntry& e = result.entries[screened[i].entry];
    if (e.status == "timed" && e.median_ms <= best * (1 + kCloseFraction)) close.push_back(&screened[i]);
  }
  const bool with_baseline = result.baseline.status == "timed";
  if (close.size() + (with_baseline ? 1 : 0) >= 2) {
    std::vector<std::function<void(CUstream)>> launches;
    for (const Loaded* f : close) {
      reserve_workspace(*f->runner);
      launches.push_back([&, f](CUstream s) { f->runner->run(gemm, workspace.get(), s); });
    }
    if (with_baseline) launches.push_back([&](CUstream s) { cublas.run(gemm, 0, s); });
    const std::vector<TimingStats> stats = timer.interleave(launches, static_cast<int>(job.repeats));
    for (size_t i = 0; i < close.size(); ++i) {
      TimedEntry& e = result.entries[close[i]->entry];
      e.interleaved_median_ms = stats[i].median_ms;
      e.interleaved_spread = stats[i].spread();
    }
    if (with_baseline) {
      result.baseline.interleaved_median_ms = stats.back().median_ms;
      result.baseline.interleaved_spread = stats.back().spread();
    }
    write_partial(result);
  }
  return result;
}

}  // namespace tunefuzz::device
