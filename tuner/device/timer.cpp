#include "tuner/device/timer.hpp"

#include <algorithm>
#include <utility>

#include "tuner/device/l2_clean_ptx.hpp"

namespace tunefuzz::device {

namespace {
struct Event {
  CUevent handle = nullptr;
  Event() { check(cuEventCreate(&handle, CU_EVENT_DEFAULT), "cuEventCreate"); }
  ~Event() {
    if (handle) cuEventDestroy(handle);
  }
  Event(Event&& other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
  Event(const Event&) = delete;
};
// Median, minimum and maximum of the samples.
void summarise(TimingStats& stats) {
  std::vector<double> sorted = stats.samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  stats.min_ms = sorted.front();
  stats.max_ms = sorted.back();
  stats.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

}  // namespace

Timer::Timer(CUstream stream, int64_t l2_bytes)
    : stream_(stream), flush_(static_cast<size_t>(2 * l2_bytes)), clean_(kL2CleanPtx) {
  clean_entry_ = clean_.function(kL2CleanEntry);
  CUdevice device = 0;
  int sms = 0;
  check(cuCtxGetDevice(&device), "cuCtxGetDevice");
  check(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), "cuDeviceGetAttribute");
  clean_blocks_ = kL2CleanBlocksPerSm * static_cast<unsigned>(std::max(sms, 1));
}

void Timer::flush(unsigned round) {
  check(cuMemsetD32Async(flush_.get(), round, flush_.bytes() / 4, stream_), "L2 flush (memset)");
  CUdeviceptr data = flush_.get();
  unsigned long long words = flush_.bytes() / 16;
  void* args[] = {&data, &words};
  check(cuLaunchKernel(clean_entry_, clean_blocks_, 1, 1, kL2CleanThreads, 1, 1, 0, stream_, args, nullptr),
        "L2 flush (reading it back)");
}

TimingStats Timer::time(const std::function<void(CUstream)>& launch, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) launch(stream_);
  check(cuStreamSynchronize(stream_), "cuStreamSynchronize (warm-up)");
  std::vector<Event> starts(repeats), ends(repeats);
  for (int i = 0; i < repeats; ++i) {
    flush(static_cast<unsigned>(i));
    check(cuEventRecord(starts[i].handle, stream_), "cuEventRecord");
    launch(stream_);
    check(cuEventRecord(ends[i].handle, stream_), "cuEventRecord");
  }
  check(cuStreamSynchronize(stream_), "cuStreamSynchronize (timing)");
  TimingStats stats;
  for (int i = 0; i < repeats; ++i) {
    float ms = 0;
    check(cuEventElapsedTime(&ms, starts[i].handle, ends[i].handle), "cuEventElapsedTime");
    stats.samples_ms.push_back(ms);
  }
  summarise(stats);
  return stats;
}

std::vector<TimingStats> Timer::interleave(const std::vector<std::function<void(CUstream)>>& launches,
                                           int rounds, int warmup) {
  for (int i = 0; i < warmup; ++i)
    for (const auto& launch : launches) launch(stream_);
  std::vector<std::vector<Event>> starts(launches.size()), ends(launches.size());
  for (size_t i = 0; i < launches.size(); ++i) {
    starts[i].resize(rounds);
    ends[i].resize(rounds);
  }
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < launches.size(); ++i) {
      flush(static_cast<unsigned>(r));
      check(cuEventRecord(starts[i][r].handle, stream_), "cuEventRecord");
      launches[i](stream_);
      check(cuEventRecord(ends[i][r].handle, stream_), "cuEventRecord");
    }
  check(cuStreamSynchronize(stream_), "cuStreamSynchronize (interleaved timing)");
  std::vector<TimingStats> out(launches.size());
  for (size_t i = 0; i < launches.size(); ++i) {
    for (int r = 0; r < rounds; ++r) {
      float ms = 0;
      check(cuEventElapsedTime(&ms, starts[i][r].handle, ends[i][r].handle), "cuEventElapsedTime");
      out[i].samples_ms.push_back(ms);
    }
    summarise(out[i]);
  }
  return out;
}

}  // namespace tunefuzz::device
