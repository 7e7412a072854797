// The runtime's handle: a call is checked and decided on the host (runtime/dispatch) before anything touches
// the GPU, the decision is kept per distinct problem (shape, types, layout, alignments, beta's class) so a warm
// call is a lookup and a launch, and each candidate is loaded once, from an embedded image or compiled on first
// use through the persistent kernel cache, then launched through its platform (runtime/cuda, runtime/hip).
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "runtime/api/kernel_store.hpp"
#include "runtime/dispatch/platform.hpp"
#include "runtime/dispatch/requests.hpp"

namespace tunefuzz::runtime {

namespace {

/// Everything a decision depends on: sizes, leading dimensions, types, layout, alignments, beta's class.
using DecisionKey = std::array<int64_t, 13>;

DecisionKey key_of(const dispatch::Request& r, const GemmShape& s) {
  return {s.m, s.n, s.k, s.lda, s.ldb, s.ldc, static_cast<int64_t>(r.a_type), static_cast<int64_t>(r.c_type),
          2 * (s.layout.a == tunefuzz::Order::col) + (s.layout.b == tunefuzz::Order::col), s.a_alignment, s.b_alignment,
          s.c_alignment, r.beta != 0};
}

Source source_of(dispatch::Step step) {
  switch (step) {
    case dispatch::Step::quick_return: return Source::quick_return;
    case dispatch::Step::exact: return Source::exact;
    case dispatch::Step::nearest_shape: return Source::nearest_shape;
    case dispatch::Step::same_arch: return Source::same_arch;
    case dispatch::Step::safe_default: return Source::safe_default;
    case dispatch::Step::fallback: return Source::cublas;
  }
  return Source::quick_return;
}

std::unique_ptr<dispatch::Platform> make_platform(const Options& options) {
  return options.platform == Platform::hip ? dispatch::make_hip_platform(options.device)
                                           : dispatch::make_cuda_platform(options.device);
}

}  // namespace

struct Handle::State {
  struct Decided {
    explicit Decided(dispatch::Decision d) : decision(std::move(d)) {}
    dispatch::Decision decision;
    mutable std::atomic<const dispatch::Kernel*> kernel{nullptr};  ///< the candidate's, once loaded
  };

  State(Table table, const Options& options_in)
      : options(options_in), platform(make_platform(options)), kernels(table, *platform, options) {
    target.device = platform->device();
    if (options.cublas_fallback && platform->has_fallback()) {
      target.fallback_name = platform->fallback_name();
      target.fallback_refusal = [this](const GemmShape& shape, TypePair types, float beta) {
        return platform->fallback_refusal(shape, types, beta);
      };
    } else if (platform->has_fallback()) {
      target.no_fallback = "the handle was made with cublas_fallback off";
    }
  }

  /// The decision for a checked request whose M and N are not zero, kept for the next call like it.
  const Decided& decide(const dispatch::Request& request, const GemmShape& shape) {
    const DecisionKey key = key_of(request, shape);
    {
      const std::shared_lock lock(decisions_mutex);
      if (auto found = decisions.find(key); found != decisions.end()) return found->second;
    }
    dispatch::Decision decision = dispatch::decide(kernels.rows(), target, request);
    const std::unique_lock lock(decisions_mutex);
    return decisions.try_emplace(key, std::move(decision)).first->second;
  }

  void run(const Problem& problem, const Operands& operands, void* stream) {
    const dispatch::Request request = dispatch::request_of(problem, operands);
    dispatch::check(request);
    if (request.m == 0 || request.n == 0) return;  // quick return: nothing to launch
    const GemmShape shape = dispatch::shape_of(request);
    const Decided& decided = decide(request, shape);
    if (decided.decision.step == dispatch::Step::fallback) return platform->run_fallback(request, shape, stream);
    const dispatch::Kernel* kernel = decided.kernel.load(std::memory_order_acquire);
    if (!kernel) {
      kernel = &kernels.get(*decided.decision.candidate);
      decided.kernel.store(kernel, std::memory_order_release);
    }
    kernel->run(request, shape, stream);
  }

  Options options;
  std::unique_ptr<dispatch::Platform> platform;
  KernelStore kernels;
  dispatch::Target target;
  std::shared_mutex decisions_mutex;
  std::map<DecisionKey, Decided> decisions;  ///< node-based: references stay valid as it grows
};

Handle::Handle(Table table, Options options) : state_(std::make_unique<State>(std::move(table), options)) {}
Handle::~Handle() = default;
Handle::Handle(Handle&&) noexcept = default;
Handle& Handle::operator=(Handle&&) noexcept = default;

void Handle::gemm(const Problem& problem, const Operands& operands, CUstream_st* stream) const {
  if (state_->options.platform != Platform::cuda)
    throw Error(ErrorKind::bad_input, "a CUDA stream was given to a handle made for HIP");
  state_->run(problem, operands, stream);
}

void Handle::gemm(const Problem& problem, const Operands& operands, ihipStream_t* stream) const {
  if (state_->options.platform != Platform::hip)
    throw Error(ErrorKind::bad_input, "a HIP stream was given to a handle made for CUDA");
  state_->run(problem, operands, stream);
}

Choice Handle::choose(const Problem& problem, const Operands& operands) const {
  const dispatch::Request request = dispatch::request_of(problem, operands);
  dispatch::check(request);
  Choice choice;
  if (request.m == 0 || request.n == 0) return choice;
  const dispatch::Decision& d = state_->decide(request, dispatch::shape_of(request)).decision;
  choice.passed_over = d.passed_over;
  if (d.step == dispatch::Step::fallback) {
    choice.source = Source::cublas;
    choice.kernel = "cublas";
    return choice;
  }
  choice.source = source_of(d.step);
  choice.kernel = d.candidate->id();
  if (d.row) choice.row = d.row->card + ": " + d.row->problem;
  choice.image = state_->kernels.has_image(*d.candidate) ? "embedded" : "compiled on first use";
  const GemmShape shape = dispatch::shape_of(request);
  choice.form = describe_form(shape, launch_form(*d.candidate->kernel_template, d.candidate->point, shape));
  return choice;
}

const std::string& Handle::device_name() const {
  return state_->target.device.name;
}

const std::string& Handle::device_arch() const {
  return state_->target.device.arch;
}

}  // namespace tunefuzz::runtime
