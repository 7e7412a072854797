// The measurements of a time job on one problem's inputs (see time_bench.hpp): inputs made from the job's
// seed, screens, verified full timings, re-timings in turns, and the copy floor.
#include "tuner/device/time_bench.hpp"

#include <algorithm>
#include <random>

#include "tuner/device/fuzzing.hpp"
#include "tuner/device/gpu_turn.hpp"

namespace tunefuzz::device {

namespace {

// Threads that fill the inputs (the big problems hold 10^8+ elements): the job's share of the host, as the
// checks have (TimeJob::host_threads, up to 16 cores), so that the host work of time workers sharing a GPU
// leaves a core to the one measuring. The values are the same whatever the number.
unsigned fill_threads() {
  return std::max(1u, fuzz::host_threads());
}

// Uniform values in [-1, 1).
void fill_uniform(fuzz::HostMatrix& matrix, uint64_t seed) {
  fuzz::fill_uniform(matrix, seed, fill_threads());
}

// A logical operand on the device in the problem's storage order (a row-major one straight from `logical`).
// Only the allocation and the copy take the GPU's turn (gpu_turn.hpp: the driver clears the memory it hands
// out, at the card's bandwidth); the transposition is host work.
DeviceBuffer upload(const fuzz::HostMatrix& logical, Order order, int64_t ld) {
  const auto send = [](const fuzz::HostMatrix& image) {
    const GpuTurn turn;
    DeviceBuffer buffer(image.size_bytes());
    buffer.upload(image.bytes(), image.size_bytes());
    return buffer;
  };
  return order == Order::row ? send(logical) : send(fuzz::transposed(logical, ld));
}

// The timer, whose flush buffer is device memory, made in a turn.
Timer timer_in_turn(CUstream stream, int64_t l2_bytes) {
  const GpuTurn turn;
  return Timer(stream, l2_bytes);
}

}  // namespace

TimeBench::TimeBench(const TimeJob& job, int64_t l2_bytes, CUstream stream)
    : job_(job), stream_(stream), timer_(timer_in_turn(stream, l2_bytes)), shape_(shape_of(job.problem)) {
  const TypePair types{job.problem.input, job.problem.output};
  // A and B logical (m×k, k×n) for the check; the device holds them in the problem's storage order.
  a_ = fuzz::HostMatrix(types.input, shape_.m, shape_.k, shape_.k);
  b_ = fuzz::HostMatrix(types.input, shape_.k, shape_.n, shape_.n);
  c_ = fuzz::HostMatrix(types.output, shape_.m, shape_.n, shape_.ldc);
  fill_uniform(a_, job.seed + 1);
  fill_uniform(b_, job.seed + 2);
  if (job.problem.beta != 0.0) fill_uniform(c_, job.seed + 3);
  a_dev_ = upload(a_, shape_.layout.a, shape_.lda);
  b_dev_ = upload(b_, shape_.layout.b, shape_.ldb);
  {
    const GpuTurn turn;
    c_dev_ = DeviceBuffer(c_.size_bytes());
  }
  gemm_ = {a_dev_.get(),
           b_dev_.get(),
           c_dev_.get(),
           shape_,
           static_cast<float>(job.problem.alpha),
           static_cast<float>(job.problem.beta),
           {}};
  flops_ = 2.0 * static_cast<double>(shape_.m) * static_cast<double>(shape_.n) * static_cast<double>(shape_.k);
}

void TimeBench::reserve_workspace(const GemmRunner& runner) {
  const int64_t bytes = runner.workspace_bytes(shape_);
  const GpuTurn turn;
  if (bytes > 0) workspace_.reserve(static_cast<size_t>(bytes));
}

void TimeBench::reset_c(const fuzz::HostMatrix& c, DeviceBuffer& c_dev) {
  const GpuTurn turn;
  if (job_.problem.beta != 0.0)
    c_dev.upload(c.bytes(), c.size_bytes());
  else
    check(cuMemsetD8(c_dev.get(), 0xFF, c.size_bytes()), "poisoning C with NaN");  // all-ones bits: NaN
}

bool TimeBench::guarded(TimedEntry& entry, const std::function<void()>& step) {
  try {
    step();
    return true;
  } catch (const CudaError& e) {
    if (e.poisons_context()) throw;
    entry.status = "failed";
    entry.message = e.what();
    return false;
  }
}

void TimeBench::time_into(const GemmRunner& runner, int64_t warmup, int64_t repeats, TimedEntry& entry) {
  reserve_workspace(runner);
  const GpuTurn turn;
  record(timer_.time([&](CUstream s) { runner.run(gemm_, workspace_.get(), s); }, static_cast<int>(warmup),
                     static_cast<int>(repeats)),
         entry);
}

void TimeBench::record(const TimingStats& stats, TimedEntry& entry) const {
  entry.median_ms = stats.median_ms;
  entry.min_ms = stats.min_ms;
  entry.max_ms = stats.max_ms;
  entry.tflops = flops_ / (stats.median_ms * 1e-3) / 1e12;
}

void TimeBench::screen(const GemmRunner& runner, int64_t repeats, TimedEntry& entry) {
  if (guarded(entry, [&] { time_into(runner, 1, repeats, entry); })) entry.status = "screened";
}

bool TimeBench::warm_up(const GemmRunner& runner, TimedEntry& entry) {
  return guarded(entry, [&] {
    reserve_workspace(runner);
    const GpuTurn turn;
    runner.run(gemm_, workspace_.get(), stream_);
    check(cuStreamSynchronize(stream_), "cuStreamSynchronize (warm-up)");
  });
}

void TimeBench::screen_in_turns(const std::vector<const GemmRunner*>& runners, int64_t repeats,
                                const std::vector<TimedEntry*>& entries) {
  const std::vector<TimingStats> stats = interleave(runners, repeats, 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    record(stats[i], *entries[i]);
    entries[i]->status = "screened";
  }
}

bool TimeBench::run_once(const GemmRunner& runner, const DeviceGemm& gemm, TimedEntry& entry) {
  const GpuTurn turn;  // the run and its download: the check that follows is host work
  const bool ran = guarded(entry, [&] {
    reserve_workspace(runner);
    runner.run(gemm, workspace_.get(), stream_);
    check(cuStreamSynchronize(stream_), "cuStreamSynchronize");
  });
  if (!ran) return false;
  if (out_.size_bytes() != c_.size_bytes())
    out_ = fuzz::HostMatrix(c_.type(), shape_.m, shape_.n, shape_.ldc);
  check(cuMemcpyDtoH(out_.bytes(), gemm.c, out_.size_bytes()), "downloading C");
  return true;
}

bool TimeBench::judged(const fuzz::Verdict& verdict, const std::string& what, TimedEntry& entry,
                       OnMismatch on_mismatch) {
  if (verdict.pass) return true;
  entry.message = what + verdict.summary();
  if (on_mismatch == OnMismatch::reject) {
    entry.status = "incorrect";
    return false;
  }
  entry.message = "outside the bound, timed anyway: " + entry.message;
  return true;
}

TimeBench::Integers& TimeBench::integers() {
  if (integers_) return *integers_;
  integers_ = std::make_unique<Integers>();
  Integers& in = *integers_;
  const unsigned threads = fill_threads();
  in.a = fuzz::HostMatrix(a_.type(), shape_.m, shape_.k, shape_.k);
  in.b = fuzz::HostMatrix(b_.type(), shape_.k, shape_.n, shape_.n);
  in.c = fuzz::HostMatrix(c_.type(), shape_.m, shape_.n, shape_.ldc);
  fuzz::fill_hashed_integers(in.a, job_.seed + 101, threads, -2, 2);
  fuzz::fill_hashed_integers(in.b, job_.seed + 102, threads, -2, 2);
  if (job_.problem.beta != 0.0) fuzz::fill_hashed_integers(in.c, job_.seed + 103, threads, -2, 2);
  in.a_dev = upload(in.a, shape_.layout.a, shape_.lda);
  in.b_dev = upload(in.b, shape_.layout.b, shape_.ldb);
  {
    const GpuTurn turn;
    in.c_dev = DeviceBuffer(in.c.size_bytes());
  }
  in.gemm = gemm_;
  in.gemm.a = in.a_dev.get();
  in.gemm.b = in.b_dev.get();
  in.gemm.c = in.c_dev.get();
  return in;
}

bool TimeBench::exact_possible(const fuzz::ArithmeticModel& model) const {
  const double products = fuzz::kLargestExactProduct * static_cast<double>(shape_.k);
  return fuzz::exact_applies(fuzz::Distribution::small_int, model) &&
         fuzz::exact_scalars(job_.problem.alpha, job_.problem.beta, products, 2, model.accumulator);
}

void TimeBench::prepare_projections() {
  if (!projection_)
    projection_.emplace(fuzz::GemmOperands{&a_, &b_, &c_, job_.problem.alpha, job_.problem.beta}, 2,
                        job_.seed + 17);
}

void TimeBench::prepare_integers(const fuzz::ArithmeticModel& model) {
  if (!exact_possible(model)) return;
  Integers& in = integers();
  if (!in.projection)
    in.projection.emplace(fuzz::GemmOperands{&in.a, &in.b, &in.c, job_.problem.alpha, job_.problem.beta}, 2,
                          job_.seed + 19);
}

bool TimeBench::verify(const GemmRunner& runner, const fuzz::ArithmeticModel& model, int64_t tile_m,
                       int64_t tile_n, TimedEntry& entry, OnMismatch on_mismatch) {
  // Each step charged to its phase, then back to the caller's (a check's host work is the rest of it).
  const char* const checking = clock_ ? clock_->running() : nullptr;
  const auto charge = [&](const char* phase) {
    if (clock_ && checking) clock_->to(phase ? phase : checking);
  };
  charge("verify_run");
  reset_c(c_, c_dev_);
  const bool ran = run_once(runner, gemm_, entry);
  charge("projections");
  if (ran) prepare_projections();
  charge(nullptr);
  if (!ran) return false;
  const fuzz::Verdict verdict = projection_->check(out_, model, 512, tile_m, tile_n, job_.seed + 17);
  entry.worst_error_ratio = verdict.worst_ratio;
  if (!verdict.pass) return judged(verdict, "", entry, on_mismatch);  // no exact check after a miss

  if (!exact_possible(model)) return true;
  charge("integers");
  prepare_integers(model);
  Integers& in = integers();
  charge("verify_run");
  reset_c(in.c, in.c_dev);
  const bool ran_exact = run_once(runner, in.gemm, entry);
  charge(nullptr);
  if (!ran_exact) return false;
  const fuzz::Verdict exact = in.projection->check(out_, model, 512, tile_m, tile_n, job_.seed + 19, true);
  entry.exact_verified = exact.pass;
  return judged(exact, "exact check on integer inputs: ", entry, on_mismatch);
}

void TimeBench::time(const GemmRunner& runner, TimedEntry& entry) {
  if (guarded(entry, [&] { time_into(runner, job_.warmup, job_.repeats, entry); })) entry.status = "timed";
}

std::vector<TimingStats> TimeBench::interleave(const std::vector<const GemmRunner*>& runners, int64_t repeats,
                                               int warmup) {
  std::vector<std::function<void(CUstream)>> launches;
  for (const GemmRunner* runner : runners) {
    reserve_workspace(*runner);
    launches.push_back([this, runner](CUstream s) { runner->run(gemm_, workspace_.get(), s); });
  }
  const GpuTurn turn;
  return timer_.interleave(launches, static_cast<int>(repeats), warmup);
}

MemoryTraffic TimeBench::copy_floor(int64_t warmup, int64_t repeats) {
  MemoryTraffic traffic;
  traffic.bytes = static_cast<int64_t>(a_.size_bytes() + b_.size_bytes() +
                                       c_.size_bytes() * (job_.problem.beta != 0.0 ? 2 : 1));
  const size_t half = static_cast<size_t>(traffic.bytes / 2);
  const GpuTurn turn;  // before the buffers: their release is in the turn too
  DeviceBuffer from(half), to(half);
  const TimingStats copy = timer_.time(
      [&](CUstream s) { check(cuMemcpyDtoDAsync(to.get(), from.get(), half, s), "cuMemcpyDtoDAsync"); },
      static_cast<int>(warmup), static_cast<int>(repeats));
  traffic.copy_ms = copy.median_ms;
  return traffic;
}

}  // namespace tunefuzz::device
