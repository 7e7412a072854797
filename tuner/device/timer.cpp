#include "tuner/device/timer.hpp"

#include <algorithm>
#include <utility>

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
    : stream_(stream), flush_(static_cast<size_t>(2 * l2_bytes)) {}

TimingStats Timer::time(const std::function<void(CUstream)>& launch, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) launch(stream_);
  check(cuStreamSynchronize(stream_), "cuStreamSynchronize (warm-up)");
  std::vector<Event> starts(repeats), ends(repeats);
  for (int i = 0; i < repeats; ++i) {
    check(cuMemsetD32Async(flush_.get(), static_cast<unsigned>(i), flush_.bytes() / 4, stream_), "L2 flush");
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
                                           int rounds) {
  for (const auto& launch : launches) launch(stream_);  // one warm-up each
  std::vector<std::vector<Event>> starts(launches.size()), ends(launches.size());
  for (size_t i = 0; i < launches.size(); ++i) {
    starts[i].resize(rounds);
    ends[i].resize(rounds);
  }
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < launches.size(); ++i) {
      check(cuMemsetD32Async(flush_.get(), static_cast<unsigned>(r), flush_.bytes() / 4, stream_),
            "L2 flush");
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
